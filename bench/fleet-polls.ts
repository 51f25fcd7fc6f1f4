/**
 * `npm run bench:fleet-polls`: upstream polls per poll interval with three
 * gateway instances sharing a redis-server and N subscribers (default 1,000,
 * graphql-ws, same token, one project) spread evenly over them, next to the
 * same N on one instance. Target: the same count, since one instance holds
 * the poll's lease and publishes for all. Needs redis-server on PATH.
 *
 *   npm run bench:fleet-polls -- [--subscribers 1000] [--interval 200] [--seconds 5] [--no-build]
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { startGitlabSandbox } from '../src/sandbox/gitlab/server.js';
// The same process helpers as the end-to-end tests.
import { startRedis, waitForOutput } from '../test/helpers/processes.js';

const ROOT = new URL('../', import.meta.url);
const { values } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '1000' },
    interval: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '5' },
    'no-build': { type: 'boolean', default: false },
  },
});
const SUBSCRIBERS = Number(values.subscribers);
const INTERVAL = Number(values.interval);
const SECONDS = Number(values.seconds);

async function gateway(gitlabUrl: string, redisUrl: string | null): Promise<{ child: ChildProcess; url: string }> {
  const env: Record<string, string> = { GITLAB_URL: gitlabUrl, POLL_INTERVAL_MS: String(INTERVAL), POLL_MAX_INTERVAL_MS: String(INTERVAL), LOG_LEVEL: 'error' };
  if (redisUrl) env.REDIS_URL = redisUrl;
  const child = spawn(process.execPath, ['dist/src/main.js', 'serve', '--port', '0', '--host', '127.0.0.1'], { cwd: ROOT, env: { ...process.env, ...env } });
  return { child, url: (await waitForOutput(child, /GraphiQL at (\S+)/, 'gateway'))[1] ?? '' };
}

/** Polls of the project's job list the gateway made, from its own /metrics. */
async function polls(url: string): Promise<number> {
  const text = await (await fetch(new URL('/metrics', url))).text();
  let total = 0;
  for (const m of text.matchAll(/^duograph_upstream_requests_total\{[^}]*route="\/projects\/:param\/jobs"[^}]*\} (\d+)/gm)) total += Number(m[1]);
  return total;
}

async function measure(urls: string[]): Promise<number> {
  const clients: Client[] = [];
  const subscribed: Promise<void>[] = [];
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const url = urls[i % urls.length] ?? '';
    const client = createClient({
      url: url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { 'Private-Token': 'demo-token' },
      retryAttempts: 0,
    });
    clients.push(client);
    subscribed.push(
      new Promise((resolve) => {
        client.subscribe(
          { query: 'subscription { jobStatusUpdated(projectId: "7") { restId status } }' },
          { next: () => resolve(), error: () => resolve(), complete: () => resolve() },
        );
      }),
    );
  }
  await Promise.all(subscribed);
  const before = await Promise.all(urls.map(polls));
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  const elapsed = performance.now() - started;
  const after = await Promise.all(urls.map(polls));
  await Promise.all(clients.map((c) => c.dispose()));
  const total = after.reduce((sum, n, i) => sum + n - (before[i] ?? 0), 0);
  return (total * INTERVAL) / elapsed;
}

if (!values['no-build']) spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
if (spawnSync('redis-server', ['--version']).status !== 0) {
  console.log('bench:fleet-polls needs redis-server on PATH (apt-get install -y redis-server).');
  process.exit(0);
}
const { child: redis, url: redisUrl } = await startRedis();
const sandbox = await startGitlabSandbox({ clock: 'manual' });
const one = await gateway(sandbox.url, null);
const single = await measure([one.url]);
one.child.kill('SIGTERM');
const fleet = await Promise.all([1, 2, 3].map(() => gateway(sandbox.url, redisUrl)));
const three = await measure(fleet.map((g) => g.url));
for (const g of fleet) g.child.kill('SIGTERM');
console.log(`${SUBSCRIBERS} subscribers on one project, poll interval ${INTERVAL} ms, ${SECONDS} s`);
console.log(`  one instance:                   ${single.toFixed(2)} polls per interval`);
console.log(`  three instances sharing Redis:  ${three.toFixed(2)} polls per interval (target: the same as one instance)`);
await sandbox.close();
redis.kill('SIGTERM');
process.exit(0);
