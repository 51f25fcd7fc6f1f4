import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsx = ['--import', 'tsx', 'src/main.ts'];

describe('the duograph command', () => {
  it('starts the sandbox and the gateway, prints the GraphiQL URL and demo credentials, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, [...tsx, 'serve', '--port', '0', '--host', '127.0.0.1'], { cwd: root, env: { ...process.env, GITLAB_URL: '' } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL printed:\n${output}`)), 15_000);
      child.stdout.on('data', () => {
        const match = /GraphiQL at (\S+)/.exec(output);
        if (match?.[1] && output.includes('admin-token')) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
    });
    expect(output).toContain('demo-token');
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'private-token': 'demo-token' },
      body: JSON.stringify({ query: '{ project(fullPath: "platform/core") { name } }' }),
    });
    expect(await response.json()).toEqual({ data: { project: { name: 'Core' } } });
    const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
  });

  it('exits non-zero with one clear line on bad config', () => {
    for (const [env, expected] of [
      [{ PORT: 'eighty' }, 'duograph: PORT must be a whole number, got "eighty"'],
      [{ GITLAB_URL: 'gitlab.example.com' }, 'duograph: GITLAB_URL is not a URL: "gitlab.example.com"'],
    ] as const) {
      const result = spawnSync(process.execPath, tsx, { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8' });
      expect(result.status).toBe(2);
      expect(result.stderr.trim().split('\n')).toEqual([expected]);
    }
  });

  it('lists every option with its environment variable in --help', () => {
    const result = spawnSync(process.execPath, [...tsx, '--help'], { cwd: root, encoding: 'utf8' });
    expect(result.status).toBe(0);
    for (const name of ['PORT', 'GITLAB_URL', 'UPSTREAM_TIMEOUT_MS', '--gitlab-url']) expect(result.stdout).toContain(name);
  });
});
