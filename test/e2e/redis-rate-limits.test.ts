/**
 * GitLab's rate limit seen by one instance holds back the others: two
 * gateway processes on a real redis-server, in front of a sandbox GitLab
 * that allows one call a minute per user (its window on the test's manual
 * clock). Skipped (with a message) when redis-server is not installed,
 * except under CI, where it fails instead.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startRedis, waitForOutput } from '../helpers/processes.js';
import { startGitlabSandbox, type GitlabSandbox } from '../../src/sandbox/gitlab/server.js';

const hasRedis = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0;
if (!hasRedis && process.env.CI) {
  throw new Error('redis-server is not on PATH, and CI requires the Redis rate limit test (apt-get install -y redis-server).');
}
if (!hasRedis) console.warn('Skipping the Redis rate limit test: redis-server is not on PATH (apt-get install -y redis-server).');

const CORE = '{ project(fullPath: "platform/core") { name } }';
const CORE_PATH = '/api/v4/projects/platform%2Fcore';

interface Gateway {
  child: ChildProcess;
  url: string;
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function startGateway(gitlabUrl: string, redisUrl: string): Promise<Gateway> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--port', '0', '--host', '127.0.0.1'], {
    env: { ...process.env, GITLAB_URL: gitlabUrl, REDIS_URL: redisUrl, CACHE_MAX_AGE_MS: '0', POLL_INTERVAL_MS: '600000', POLL_MAX_INTERVAL_MS: '600000' },
  });
  const match = await waitForOutput(child, /GraphiQL at (\S+)/, 'gateway');
  return { child, url: match[1] ?? '' };
}

async function gql(gateway: Gateway, token: string): Promise<{ data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] }> {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'private-token': token },
    body: JSON.stringify({ query: CORE }),
  });
  return (await response.json()) as { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

async function heldBack(gateway: Gateway): Promise<number> {
  const text = await (await fetch(new URL('/metrics', gateway.url))).text();
  return Number(/^duograph_upstream_rate_limited_scopes (\d+)/m.exec(text)?.[1] ?? 0);
}

describe.skipIf(!hasRedis)("GitLab's rate limit across two instances on one Redis", () => {
  let redis: ChildProcess | undefined;
  let sandbox: GitlabSandbox;
  let a: Gateway;
  let b: Gateway;

  beforeAll(async () => {
    const started = await startRedis();
    redis = started.child;
    sandbox = await startGitlabSandbox({ clock: 'manual', rateLimitPerMinute: 1 });
    [a, b] = await Promise.all([startGateway(sandbox.url, started.url), startGateway(sandbox.url, started.url)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([stop(a?.child), stop(b?.child)]);
    await sandbox?.close();
    await stop(redis);
  });

  it('holds back on every instance the calls of a scope GitLab answered 429 on one, and no other scope', async () => {
    expect(await gql(a, 'demo-token')).toEqual({ data: { project: { name: 'Core' } } });
    const refused = await gql(a, 'demo-token');
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_RATE_LIMITED', upstream: { retryAfterSeconds: 60 } });
    const calls = () => sandbox.requests.filter((r) => r.path === CORE_PATH).length;
    expect(calls()).toBe(2);
    // B hears of the 429 through Redis.
    await vi.waitFor(async () => expect(await heldBack(b)).toBe(1));
    const onB = await gql(b, 'demo-token');
    expect(onB.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_RATE_LIMITED' });
    expect(onB.errors?.[0]?.message).toMatch(/rate limiting these credentials; no call is sent for \d+ s/);
    expect(calls()).toBe(2);
    expect(await gql(b, 'alice-token')).toEqual({ data: { project: { name: 'Core' } } });
    expect(calls()).toBe(3);
  });
});
