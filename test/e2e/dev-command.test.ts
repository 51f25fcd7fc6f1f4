/**
 * `npm run dev` as CONTRIBUTING gives it: the gateway from the sources under
 * tsx watch, logs pretty-printed; SIGTERM to npm (what a process manager or
 * an IDE's stop button sends) leaves no process of it behind.
 */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it, vi } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The processes of a process group, as `ps` lists them. */
const group = (pgid: number) =>
  spawnSync('ps', ['-o', 'pid=,args=', '-g', String(pgid)], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((line) => line.trim());

it('serves with pretty logs, and stops whole on SIGTERM to npm', async () => {
  // A group of its own, so that what is left of it afterwards can be listed.
  const npm = spawn('npm', ['run', 'dev', '--', '--port', '0', '--host', '127.0.0.1'], {
    cwd: root,
    detached: true,
    env: { ...process.env, GITLAB_URL: '', HUBZILLA_URL: '', LOG_FILE: '', LOG_LEVEL: 'info' },
  });
  let output = '';
  npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  const pgid = npm.pid ?? 0;
  try {
    // Readiness, not a time budget: tsx compiles on start, slowly on a busy machine.
    await vi.waitFor(() => expect(output).toMatch(/GraphiQL at (\S+)[\s\S]*Hubzilla upstream/), { timeout: 120_000, interval: 100 });
    const url = /GraphiQL at (\S+)/.exec(output)?.[1] ?? '';
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
    // tsx, the gateway (and esbuild's service) run under npm.
    expect(group(pgid).length).toBeGreaterThanOrEqual(3);

    npm.kill('SIGTERM');
    await exited;
    await vi.waitFor(() => expect(group(pgid)).toEqual([]), { timeout: 30_000, interval: 100 });
    // pino-pretty's lines, not JSON: the last one the gateway wrote.
    expect(output).toMatch(/^\[[\d:.]+\] INFO: shutdown complete$/m);
    expect(output).not.toMatch(/^\{"level"/m);
  } finally {
    // A failed check leaves nothing running either.
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}, 180_000);
