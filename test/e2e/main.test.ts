import { spawn, spawnSync } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startGitlabSandbox } from '../../src/sandbox/gitlab/server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** The production command, as `npm start` runs it (dist/ is built by the test run's global setup): no compiling on start. */
const cli = ['dist/src/main.js'];
/**
 * Waits on what a started process prints, never on a budget sized for an
 * idle machine: on a busy one a start takes many times as long. The test's
 * own timeout is only a backstop.
 */
const START_BACKSTOP_MS = 120_000;

/** Resolves once what a process printed matches `pattern`: on its output, not on a deadline. */
async function waitForOutput(output: () => string, pattern: RegExp): Promise<void> {
  while (!pattern.test(output())) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Starts `duograph serve` on a free port and resolves once it printed its GraphiQL URL. */
async function serve(env: Record<string, string>) {
  const child = spawn(process.execPath, [...cli, 'serve', '--port', '0', '--host', '127.0.0.1'], { cwd: root, env: { ...process.env, ...env } });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed:\n${output}`)), START_BACKSTOP_MS);
    child.stdout.on('data', () => {
      const match = /GraphiQL at (\S+)/.exec(output);
      if (match?.[1] && output.includes('GitLab upstream')) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
  });
  const stop = async () => {
    const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    return exit;
  };
  return { url, output: () => output, stop };
}

describe('the duograph command', { timeout: START_BACKSTOP_MS + 10_000 }, () => {
  it('starts the sandbox and the gateway, prints the GraphiQL URL and demo credentials, and stops on SIGTERM', async () => {
    const gateway = await serve({ GITLAB_URL: '' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(gateway.output()).toContain('built-in sandbox');
    expect(gateway.output()).toContain('demo-token');
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'private-token': 'demo-token' },
      body: JSON.stringify({ query: '{ project(fullPath: "platform/core") { name } }' }),
    });
    expect(await response.json()).toEqual({ data: { project: { name: 'Core' } } });
    const page = await (await fetch(gateway.url, { headers: { accept: 'text/html' } })).text();
    expect(page).toContain('query Projects');
    expect(page).toContain('demo-token');
    expect(await gateway.stop()).toBe(0);
  });

  it.each(['', '/api/v4'])('uses GITLAB_URL instead of the sandbox when it is set (given with "%s" after the base)', async (suffix) => {
    const upstream = await startGitlabSandbox();
    try {
      const gateway = await serve({ GITLAB_URL: `${upstream.url}${suffix}` });
      expect(gateway.output()).toContain(`GitLab upstream: ${upstream.url}; its API at ${upstream.url}/api/v4\n`);
      expect(gateway.output()).not.toContain('demo-token');
      const response = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'private-token': 'alice-token' },
        body: JSON.stringify({ query: '{ project(fullPath: "alice/secret-notes") { name } }' }),
      });
      expect(((await response.json()) as { data: { project: { name: string } } }).data.project.name).toBeTruthy();
      // Besides the start's one look at the API (/version, without credentials: 401 says the API is there).
      await waitForOutput(gateway.output, /GitLab API: found \(HTTP 401 in \d+ ms\)/);
      expect(upstream.requests.map((r) => r.path)).toEqual(expect.arrayContaining(['/api/v4/version', '/api/v4/projects/alice%2Fsecret-notes']));
      expect(upstream.requests.map((r) => r.path).filter((path) => path !== '/api/v4/version')).toEqual(['/api/v4/projects/alice%2Fsecret-notes']);
      expect(upstream.requests.find((r) => r.path === '/api/v4/version')?.headers['private-token']).toBeUndefined();
      expect(await gateway.stop()).toBe(0);
    } finally {
      await upstream.close();
    }
  });

  it('says at start that a GITLAB_URL answering 404 to everything has no GitLab API, and a lookup says so too, naming GITLAB_URL', async () => {
    const elsewhere = createHttpServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<html>Not Found</html>'));
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    try {
      const gateway = await serve({ GITLAB_URL: `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/wrong-prefix` });
      await waitForOutput(gateway.output, /GitLab API: not found \(404 at its root\): check GITLAB_URL/);
      const response = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'private-token': 'any-token' },
        body: JSON.stringify({ query: '{ project(fullPath: "platform/core") { name } }' }),
      });
      const answer = (await response.json()) as { data: unknown; errors: { message: string; extensions: { code: string } }[] };
      expect(answer.data).toEqual({ project: null });
      expect(answer.errors[0]?.extensions.code).toBe('UPSTREAM_ERROR');
      expect(answer.errors[0]?.message).toMatch(/GITLAB_URL/);
      expect(await gateway.stop()).toBe(0);
    } finally {
      elsewhere.close();
    }
  });

  it('exits non-zero with one clear line on bad config', () => {
    for (const [env, expected] of [
      [{ PORT: 'eighty' }, 'duograph: PORT must be a whole number, got "eighty"'],
      [{ GITLAB_URL: 'gitlab.example.com' }, 'duograph: GITLAB_URL is not a URL: "gitlab.example.com"'],
      [
        { LOG_FILE: root },
        `duograph: cannot start: LOG_FILE "${root}" cannot be opened for appending (EISDIR); set LOG_FILE to a file the gateway may write, or leave it out for stdout`,
      ],
    ] as const) {
      const result = spawnSync(process.execPath, cli, { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8', timeout: START_BACKSTOP_MS });
      expect(result.status).toBe(2);
      expect(result.stderr.trim().split('\n')).toEqual([expected]);
    }
  });

  it('names the setting that holds a busy sandbox port', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const { port } = busy.address() as AddressInfo;
    try {
      const result = spawnSync(process.execPath, [...cli, 'serve', '--port', '0', '--host', '127.0.0.1'], {
        cwd: root,
        env: { ...process.env, SANDBOX_GITLAB_PORT: String(port) },
        encoding: 'utf8',
        timeout: START_BACKSTOP_MS,
      });
      expect(result.status).toBe(2);
      expect(result.stderr.trim().split('\n').at(-1)).toBe(
        `duograph: cannot start: port ${port} of the sandbox GitLab is already in use (set SANDBOX_GITLAB_PORT or --sandbox-gitlab-port)`,
      );
    } finally {
      busy.close();
    }
  });

  it('lists every option with its environment variable in --help', () => {
    const result = spawnSync(process.execPath, [...cli, '--help'], { cwd: root, encoding: 'utf8' });
    expect(result.status).toBe(0);
    for (const name of ['PORT', 'GITLAB_URL', 'UPSTREAM_TIMEOUT_MS', '--gitlab-url']) expect(result.stdout).toContain(name);
  });
});
