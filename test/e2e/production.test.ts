/**
 * The gateway as an operator runs it: `npm start` and `node dist/src/main.js
 * serve` (the commands docs/operations.md gives) drain a request in flight on
 * SIGTERM and exit 0 with nothing left behind; the packed tarball installs
 * and runs as `duograph`; the systemd unit passes systemd-analyze; a start
 * that cannot succeed says why in one line and exits 2. test/global-setup.ts
 * has built dist/ from the current sources.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const QUERY = JSON.stringify({ query: '{ project(fullPath: "platform/core") { name } }' });
const post = (url: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'private-token': 'demo-token' }, body: QUERY });

interface Running {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/** Runs a command that starts the gateway and waits for its GraphiQL URL. */
async function start(command: string, args: string[], env: Record<string, string> = {}, cwd = root): Promise<Running> {
  const child = spawn(command, args, { cwd, env: { ...process.env, GITLAB_URL: '', HUBZILLA_URL: '', ...env } });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await vi.waitFor(() => expect(output).toMatch(/GraphiQL at (\S+)[\s\S]*Hubzilla upstream/), { timeout: 30_000, interval: 50 });
  return { child, url: /GraphiQL at (\S+)/.exec(output)?.[1] ?? '', output: () => output, exited };
}

/** SIGTERM while a slow request is in flight: the request gets its answer, the process exits 0, the port is free. */
async function drainsOnSigterm(running: Running): Promise<void> {
  const answer = post(running.url);
  await new Promise((resolve) => setTimeout(resolve, 150));
  running.child.kill('SIGTERM');
  const response = await answer;
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ data: { project: { name: 'Core' } } });
  expect(await running.exited).toBe(0);
  await expect(post(running.url)).rejects.toThrow();
}

const SLOW = { SANDBOX_LATENCY_MS: '500', PORT: '0', HOST: '127.0.0.1' };

describe('the production start', () => {
  it('`npm start` runs the compiled gateway with plain node, and SIGTERM to npm drains it and exits 0', async () => {
    const running = await start('npm', ['start'], SLOW);
    const tree = spawnSync('ps', ['-o', 'args=', '--ppid', String(running.child.pid)], { encoding: 'utf8' }).stdout;
    // npm's child is node itself (the script execs it): no shell in between to swallow the signal, no tsx.
    expect(tree.trim()).toBe('node dist/src/main.js serve');
    await drainsOnSigterm(running);
  }, 60_000);

  it('`node dist/src/main.js serve` drains a request in flight on SIGTERM and exits 0', async () => {
    await drainsOnSigterm(await start(process.execPath, ['dist/src/main.js', 'serve'], SLOW));
  }, 60_000);
});

describe('the production path of docs/operations.md', () => {
  const dir = mkdtempSync(join(tmpdir(), 'duograph-production-'));
  // A whole install to remove: tens of thousands of files, which took over 20 s under three suites at once.
  afterAll(() => rm(dir, { recursive: true, force: true }), 300_000);

  it('serves and drains after npm ci, npm run build and npm prune --omit=dev, with no dev dependency left', async () => {
    // What a clean clone holds: the tracked files as they are now.
    const tracked = spawnSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).stdout.split('\0').filter(Boolean);
    expect(tracked).toContain('package-lock.json');
    for (const file of tracked) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      copyFileSync(join(root, file), join(dir, file));
    }
    const run = (args: string[]) => spawnSync('npm', args, { cwd: dir, encoding: 'utf8', timeout: 300_000 });
    for (const args of [
      ['ci', '--prefer-offline', '--no-audit', '--no-fund'],
      ['run', 'build'],
      ['prune', '--omit=dev', '--no-audit', '--no-fund'],
    ]) {
      const step = run(args);
      expect(step.status, `npm ${args.join(' ')}: ${step.stderr}`).toBe(0);
    }
    expect(existsSync(join(dir, 'node_modules', 'typescript'))).toBe(false);
    const running = await start('npm', ['start'], SLOW, dir);
    // The build was current: nothing was compiled again (there is no compiler left to do it).
    expect(running.output()).not.toMatch(/tsc|TypeScript is not installed/);
    await drainsOnSigterm(running);
  }, 600_000);
});

describe('a closed stdout', () => {
  it('does not stop the gateway: piped into a reader that is gone, it still serves, and stops on SIGTERM', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    // `| true`: the reader exits at once, so every line the gateway prints (its URL, its JSON logs) meets EPIPE.
    const child = spawn('sh', ['-c', `exec node dist/src/main.js serve --port ${port} --host 127.0.0.1 | true`], {
      cwd: root,
      env: { ...process.env, GITLAB_URL: '', HUBZILLA_URL: '', LOG_FILE: '', LOG_LEVEL: 'info' },
    });
    const url = `http://127.0.0.1:${port}/graphql`;
    await vi.waitFor(async () => expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200), { timeout: 30_000, interval: 200 });
    for (let i = 0; i < 3; i++) {
      const response = await post(url);
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    // The gateway itself, not the shell around the pipeline.
    const gateway = Number(spawnSync('pgrep', ['-f', `^node dist/src/main.js serve --port ${port} `], { encoding: 'utf8' }).stdout.trim());
    expect(gateway).toBeGreaterThan(0);
    process.kill(gateway, 'SIGTERM');
    const alive = () => {
      try {
        process.kill(gateway, 0);
        return true;
      } catch {
        return false;
      }
    };
    await vi.waitFor(() => expect(alive()).toBe(false), { timeout: 20_000, interval: 100 });
    child.kill();
  }, 60_000);
});

describe('the packed tarball', () => {
  const dir = mkdtempSync(join(tmpdir(), 'duograph-pack-'));
  // A whole install to remove: tens of thousands of files, which took over 20 s under three suites at once.
  afterAll(() => rm(dir, { recursive: true, force: true }), 300_000);

  it('installs with npm install -g and runs as `duograph serve`, and as `npx duograph`', async () => {
    const pack = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: root, encoding: 'utf8' });
    expect(pack.status, pack.stderr).toBe(0);
    const tarball = join(dir, readdirSync(dir).find((name) => name.endsWith('.tgz')) ?? '');
    const listing = spawnSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).stdout;
    expect(listing).toContain('package/dist/src/main.js');
    expect(listing).toContain('package/deploy/duograph.service');
    expect(listing).not.toMatch(/package\/(test|bench|src)\//);

    const prefix = join(dir, 'prefix');
    const install = spawnSync('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], {
      encoding: 'utf8',
      timeout: 240_000,
    });
    expect(install.status, install.stderr).toBe(0);
    // No install script to allow: npm 11 warns of each on a global install (dist/ is built before packing).
    expect(install.stderr).not.toMatch(/install-scripts|prepare/);
    const bin = join(prefix, 'bin', 'duograph');
    await drainsOnSigterm(await start(bin, ['serve'], SLOW, dir));

    const npx = spawnSync('npx', ['--yes', '--prefer-offline', `--package=${tarball}`, 'duograph', 'print-schema'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 240_000,
    });
    expect(npx.status, npx.stderr).toBe(0);
    expect(npx.stdout).toContain('type Project');
  }, 300_000);
});

describe('the systemd unit', () => {
  const analyze = spawnSync('systemd-analyze', ['--version']).status === 0;
  // CI installs systemd (.ci/run), so the check cannot silently skip there.
  it.runIf(analyze || process.env.CI)('passes systemd-analyze verify', () => {
    const result = spawnSync('systemd-analyze', ['verify', 'deploy/duograph.service'], { cwd: root, encoding: 'utf8' });
    expect(result.error).toBeUndefined();
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});

describe('a start that cannot succeed', () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, ['dist/src/main.js', 'serve', ...args], {
      cwd: root,
      env: { ...process.env, GITLAB_URL: '', ...env },
      encoding: 'utf8',
      timeout: 30_000,
    });

  it.each([
    ['a busy port', 'busy', /^duograph: cannot start: port \d+ is already in use on 127\.0\.0\.1 \(set PORT or --port\)\n$/],
    [
      'a host that is not this machine',
      ['--host', 'no-such-host.invalid'],
      /^duograph: cannot start: cannot listen on host "no-such-host\.invalid": it is not an address of this machine \(set HOST or --host\)\n$/,
    ],
    ['a bad setting', ['--port', 'eighty'], /^duograph: --port must be a whole number, got "eighty"\n$/],
  ] as const)('says so in one line and exits 2: %s', async (_name, args, line) => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = String((blocker.address() as { port: number }).port);
    try {
      const result = run(args === 'busy' ? ['--port', port, '--host', '127.0.0.1'] : [...args]);
      expect(result.stderr).toMatch(line);
      expect(result.status).toBe(2);
    } finally {
      blocker.close();
    }
  });

  it('says so in one line and exits 2: Redis out of reach', () => {
    const result = run(['--port', '0', '--host', '127.0.0.1'], { REDIS_URL: 'redis://127.0.0.1:9', LOG_FILE: '', LOG_LEVEL: 'info' });
    expect(result.stderr).toMatch(/^duograph: cannot start: Redis \(REDIS_URL\) not reachable within \d+ ms: connect ECONNREFUSED 127\.0\.0\.1:9\n$/);
    expect(result.status).toBe(2);
    // The log's first word is about Redis, said at its first refusal; nothing about cache keys of a cache never reached.
    const logged = result.stdout.split('\n').filter(Boolean);
    expect(JSON.parse(logged[0] ?? '{}').msg).toBe('redis: not reached yet (connect ECONNREFUSED 127.0.0.1:9); trying for up to 10000 ms; check REDIS_URL');
    expect(result.stdout).not.toContain('CACHE_KEY_SECRET');
  }, 40_000);
});
