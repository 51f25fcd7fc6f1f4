/**
 * The answer cache of two gateway processes sharing a real redis-server:
 * an answer one instance stored serves the other, never another scope; a
 * webhook delivered to one drops the answers on both; no key or value in
 * Redis names a token or holds a secret; and with Redis gone mid-run every
 * request still gets its answer. Ages are set far beyond the test's length,
 * so nothing here depends on how fast the machine is. Skipped (with a
 * message) when redis-server is not installed, except under CI, where it
 * fails instead.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startRedis, waitForOutput } from '../helpers/processes.js';
import { startGitlabSandbox, STEP_MS, type GitlabSandbox } from '../../src/sandbox/gitlab/server.js';
import { bodyDigest, type CacheEntry, RedisStore } from '../../src/upstreams/cache-store.js';

const SECRET = 'redis-cache-webhook-secret-0123456789';
const hasRedis = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0;

if (!hasRedis && process.env.CI) {
  throw new Error('redis-server is not on PATH, and CI requires the Redis cache test (apt-get install -y redis-server).');
}
if (!hasRedis) console.warn('Skipping the Redis cache test: redis-server is not on PATH (apt-get install -y redis-server).');

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
  const child = spawn(process.execPath, ['dist/src/main.js', 'serve', '--port', '0', '--host', '127.0.0.1'], {
    env: {
      ...process.env,
      GITLAB_URL: gitlabUrl,
      REDIS_URL: redisUrl,
      GITLAB_WEBHOOK_SECRET: SECRET,
      CACHE_MAX_AGE_MS: '600000',
      CACHE_WEBHOOK_MAX_AGE_MS: '600000',
      POLL_INTERVAL_MS: '600000',
      POLL_MAX_INTERVAL_MS: '600000',
    },
  });
  const match = await waitForOutput(child, /GraphiQL at (\S+)/, 'gateway');
  return { child, url: match[1] ?? '' };
}

async function gql(gateway: Gateway, query: string, token = 'demo-token'): Promise<{ data?: Record<string, unknown>; errors?: unknown[] }> {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'private-token': token },
    body: JSON.stringify({ query }),
  });
  return (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
}

/** One counter of the gateway's /metrics, summed over the series whose labels include `labels`. */
async function metric(gateway: Gateway, name: string, labels: string): Promise<number> {
  const text = await (await fetch(new URL('/metrics', gateway.url))).text();
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\d+)`, 'gm'))) if (m[1]?.includes(labels)) sum += Number(m[2]);
  return sum;
}

describe.skipIf(!hasRedis)('the answer cache of two instances on one Redis', () => {
  let redis: ChildProcess | undefined;
  let sandbox: GitlabSandbox;
  let a: Gateway;
  let b: Gateway;
  let inspector: Redis;
  const gets = (path: string) => sandbox.requests.filter((r) => r.method === 'GET' && r.path === path).length;

  beforeAll(async () => {
    const started = await startRedis();
    redis = started.child;
    const redisUrl = started.url;
    inspector = new Redis(redisUrl);
    // The last test stops Redis under it.
    inspector.on('error', () => {});
    sandbox = await startGitlabSandbox({ clock: 'manual' });
    [a, b] = await Promise.all([startGateway(sandbox.url, redisUrl), startGateway(sandbox.url, redisUrl)]);
  }, 300_000);

  afterAll(async () => {
    await Promise.all([stop(a?.child), stop(b?.child)]);
    inspector?.disconnect();
    await sandbox?.close();
    await stop(redis);
  });

  it('serves an answer one instance stored from the other, and never to another scope', async () => {
    const secret = '{ project(fullPath: "alice/secret-notes") { name } }';
    expect((await gql(a, secret, 'alice-token')).data).toEqual({ project: { name: expect.any(String) } });
    expect((await gql(b, secret, 'alice-token')).data).toEqual({ project: { name: expect.any(String) } });
    expect(gets('/api/v4/projects/alice%2Fsecret-notes')).toBe(1);
    expect((await gql(b, secret, 'demo-token')).data).toEqual({ project: null });
    expect((await gql(a, secret, 'demo-token')).data).toEqual({ project: null });
    expect(gets('/api/v4/projects/alice%2Fsecret-notes')).toBe(2);
  });

  it('drops the answers on every instance when a webhook reaches one of them', async () => {
    const jobs = '{ project(id: "7") { jobs(first: 5) { nodes { restId status } } } }';
    const status = (answer: { data?: Record<string, unknown> }) =>
      (answer.data?.project as { jobs: { nodes: { restId: number; status: string }[] } } | undefined)?.jobs.nodes.find((j) => j.restId === 2003)?.status;
    // The sandbox posts its webhooks to A only.
    const registered = await gql(a, 'mutation { jobStatusWebhookRegister(input: { projectId: "7" }) { errors { message } } }');
    expect(registered.data).toEqual({ jobStatusWebhookRegister: { errors: [] } });
    expect(status(await gql(a, jobs))).toBe('RUNNING');
    expect(status(await gql(b, jobs))).toBe('RUNNING');
    expect(gets('/api/v4/projects/7/jobs')).toBe(1);
    // B's whole answer is kept, and served again without running the query.
    const servedOnB = await metric(b, 'duograph_warm_answers_total', 'outcome="served"');
    expect(status(await gql(b, jobs))).toBe('RUNNING');
    expect(await metric(b, 'duograph_warm_answers_total', 'outcome="served"')).toBe(servedOnB + 1);
    const dropsOnB = await metric(b, 'duograph_upstream_cache_invalidations_total', 'cause="webhook"');
    sandbox.advance(STEP_MS);
    await sandbox.flushDeliveries();
    expect(sandbox.deliveries.every((d) => d.status === 200)).toBe(true);
    // B hears of the drop through Redis; once it has, its next read is fresh.
    await vi.waitFor(async () => expect(await metric(b, 'duograph_upstream_cache_invalidations_total', 'cause="webhook"')).toBeGreaterThan(dropsOnB));
    expect(status(await gql(b, jobs))).toBe('FAILED');
    expect(status(await gql(a, jobs))).toBe('FAILED');
    expect(gets('/api/v4/projects/7/jobs')).toBe(2);
  });

  it("builds one instance's warm answer again when a mutation through the other changes what it used", async () => {
    const stars = async (gateway: Gateway) =>
      ((await gql(gateway, '{ project(fullPath: "platform/core") { starCount } }')).data?.project as { starCount: number } | undefined)?.starCount;
    await gql(a, 'mutation { projectUnstar(input: { id: "platform/core" }) { changed } }', 'alice-token');
    const before = await stars(b);
    const servedOnB = await metric(b, 'duograph_warm_answers_total', 'outcome="served"');
    expect(await stars(b)).toBe(before);
    expect(await metric(b, 'duograph_warm_answers_total', 'outcome="served"')).toBe(servedOnB + 1);
    const dropsOnB = await metric(b, 'duograph_upstream_cache_invalidations_total', 'cause="mutation"');
    const starred = await gql(a, 'mutation { projectStar(input: { id: "platform/core" }) { changed } }', 'alice-token');
    expect(starred.data).toEqual({ projectStar: { changed: true } });
    // B hears of the drop through Redis; from then on its kept answer is not served.
    await vi.waitFor(async () => expect(await metric(b, 'duograph_upstream_cache_invalidations_total', 'cause="mutation"')).toBeGreaterThan(dropsOnB));
    expect(await stars(b)).toBe((before ?? Number.NaN) + 1);
    expect(await metric(b, 'duograph_warm_answers_total', 'outcome="served"')).toBe(servedOnB + 1);
  });

  it('stores no token and no secret: keys are digests, and a project loses its runners token before it is stored', async () => {
    // demo owns demo/playground: GitLab sends its runners token to demo.
    const owned = await fetch(`${sandbox.url}/api/v4/projects/7`, { headers: { 'private-token': 'demo-token' } });
    const record = (await owned.json()) as { runners_token?: string };
    expect(record.runners_token).toEqual(expect.any(String));
    expect((await gql(a, '{ project(id: "7") { name importUrl } }')).errors).toBeUndefined();
    const keys = await inspector.keys('duograph:cache:*');
    expect(keys.length).toBeGreaterThan(0);
    const values = await inspector.mget(...keys);
    const bodies = values.map((value) => (JSON.parse(value ?? '{}') as { body?: string }).body ?? '');
    expect(bodies.some((body) => body.includes('"path_with_namespace":"demo/playground"'))).toBe(true);
    const dump = `${keys.join('\n')}\n${values.join('\n')}`;
    // Checked one by one, so that a failure names the secret, not the whole dump.
    for (const secret of ['demo-token', 'alice-token', 'runners_token', record.runners_token ?? '', SECRET]) expect(dump.includes(secret), secret).toBe(false);
    for (const key of keys) expect(key).toMatch(/^duograph:cache:[A-Za-z0-9_-]{43}$/);
  });

  it('answers every request with Redis gone, from the upstream', async () => {
    await stop(redis);
    const before = gets('/api/v4/projects/platform%2Fcore');
    for (const gateway of [a, b]) {
      const answer = await gql(gateway, '{ project(fullPath: "platform/core") { name } }');
      expect(answer).toEqual({ data: { project: { name: 'Core' } } });
    }
    expect(gets('/api/v4/projects/platform%2Fcore')).toBe(before + 2);
    // A write still drops (here) and answers, though the drop cannot reach the other instance.
    const star = await gql(a, 'mutation { projectStar(input: { id: "platform/core" }) { errors { message } } }', 'alice-token');
    expect(star.errors).toBeUndefined();
    expect(a.child.exitCode).toBeNull();
    expect(b.child.exitCode).toBeNull();
  });
});

describe.skipIf(!hasRedis)('the Redis store in one process', () => {
  it('parses a body read from Redis once per instance while it is unchanged, whichever key names it', async () => {
    const started = await startRedis();
    const store = new RedisStore(started.url);
    const entry = (body: string, digest: string | null = bodyDigest(body)): CacheEntry => ({
      status: 200,
      headers: {},
      body,
      ...(digest === null ? {} : { digest }),
      storedAt: 1,
      tags: [],
      origin: 'test',
      seq: 1,
    });
    try {
      // The store sends nothing before its client reaches Redis (no offline queue): written until one is read back.
      for (;;) {
        await store.set('ready', entry('{}'), 60_000);
        if (await store.get('ready')) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const page = JSON.stringify([{ id: 1, name: 'job' }]);
      let parses = 0;
      const parse = (text: string) => () => {
        parses++;
        return JSON.parse(text) as unknown;
      };
      // Two scopes' keys, one body: one parse for both, and for every later read.
      await store.set('alice', entry(page), 60_000);
      await store.set('bob', entry(page), 60_000);
      const first = (await store.get('alice'))?.parsed?.get(parse(page));
      const second = (await store.get('bob'))?.parsed?.get(parse(page));
      const third = (await store.get('alice'))?.parsed?.get(parse(page));
      expect(first).toEqual([{ id: 1, name: 'job' }]);
      expect(second).toBe(first);
      expect(third).toBe(first);
      expect(parses).toBe(1);
      // A changed body is another digest: parsed anew.
      const changed = JSON.stringify([{ id: 2, name: 'job' }]);
      await store.set('alice', entry(changed), 60_000);
      expect((await store.get('alice'))?.parsed?.get(parse(changed))).toEqual([{ id: 2, name: 'job' }]);
      expect(parses).toBe(2);
      // An entry an older instance stored, without a digest, comes without a parsed form.
      await store.set('old', entry(page, null), 60_000);
      expect(await store.get('old')).not.toHaveProperty('parsed');
    } finally {
      await store.close();
      await stop(started.child);
    }
  });
});
