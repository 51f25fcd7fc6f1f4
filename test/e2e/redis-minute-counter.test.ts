/**
 * The minute counts the fleet's GitLab budget and inbound allowance are
 * kept in (src/upstreams/minute-counter.ts), in this process and in a real
 * redis-server: a count raised to GitLab's own by many answers at once,
 * and by two instances at once, ends at the highest of them, not at their
 * sum; a call counted while Redis is paused (its commands time out, and it
 * runs them when it wakes) is counted there once, not twice; a call counted
 * while Redis is away is added there once it is back. Skipped when
 * redis-server is not installed, except under CI.
 */
import { spawnSync } from 'node:child_process';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { storeClient } from '../../src/upstreams/cache-store.js';
import { MinuteCounter } from '../../src/upstreams/minute-counter.js';
import { startRedis } from '../helpers/processes.js';

const hasRedis = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0;
if (!hasRedis && process.env.CI) throw new Error('redis-server is not on PATH, and CI requires the Redis minute count test (apt-get install -y redis-server).');
if (!hasRedis) console.warn('Skipping the Redis minute count test: redis-server is not on PATH (apt-get install -y redis-server).');

/** The middle of one minute of the clock, so that no count here crosses into the next. */
const NOW = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;
const WINDOW = Math.floor(NOW / 60_000);
const now = () => NOW;

describe('a minute count in this process', () => {
  it('raised by many answers at once ends at the highest count they saw, not their sum', async () => {
    const counter = new MinuteCounter({ prefix: 'test', now });
    await counter.add('u', 5);
    await Promise.all([counter.raise('u', 10, WINDOW), counter.raise('u', 10, WINDOW), counter.raise('u', 11, WINDOW), counter.add('u')]);
    // 11 seen by GitLab (the add in between may or may not be among them): 11 or 12, never 21 or more.
    expect((await counter.get('u')).used).toBeGreaterThanOrEqual(11);
    expect((await counter.get('u')).used).toBeLessThanOrEqual(12);
    await counter.raise('u', 3, WINDOW);
    expect((await counter.get('u')).used).toBeLessThanOrEqual(12);
    // A count of another minute raises nothing.
    await counter.raise('u', 100, WINDOW - 1);
    expect((await counter.get('u')).used).toBeLessThanOrEqual(12);
  });

  it('forgets the minutes past, and counts each key apart', async () => {
    let clock = NOW;
    const counter = new MinuteCounter({ prefix: 'test', now: () => clock });
    await counter.add('u', 4);
    await counter.add('v', 1);
    await counter.giveBack('u', 1);
    expect((await counter.get('u')).used).toBe(3);
    expect((await counter.get('v')).used).toBe(1);
    clock += 60_000;
    expect(await counter.get('u')).toEqual({ used: 0, leftMs: 30_000, window: WINDOW + 1 });
    // What is given back for a minute past changes nothing now.
    await counter.giveBack('u', 1, WINDOW);
    await counter.add('u');
    expect((await counter.get('u')).used).toBe(1);
  });
});

describe.skipIf(!hasRedis)('a minute count in Redis, for a fleet', () => {
  let redis: Awaited<ReturnType<typeof startRedis>>;
  const clients: Redis[] = [];
  /** One instance's count under `prefix`: a counter on a store client of its own, once that client is ready. */
  async function instance(prefix: string): Promise<{ counter: MinuteCounter; client: Redis }> {
    const client = storeClient(redis.url, 'duograph-test', () => {});
    clients.push(client);
    await ready(client);
    return { counter: new MinuteCounter({ prefix, redis: client, now }), client };
  }
  const ready = (c: Redis) => vi.waitFor(() => expect(c.status).toBe('ready'), { timeout: 30_000, interval: 20 });

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => {
    for (const c of clients) c.disconnect();
    if (redis?.child.exitCode === null) redis.child.kill('SIGCONT');
    redis?.child.kill('SIGTERM');
  });

  it('raised by two instances at once, answer upon answer, ends at the highest count seen', async () => {
    const [{ counter: one, client: a }, { counter: two }] = await Promise.all([instance('raise'), instance('raise')]);
    await one.add('u', 5);
    await Promise.all([10, 10, 11, 9, 11].flatMap((count) => [one.raise('u', count, WINDOW), two.raise('u', count, WINDOW)]));
    expect((await one.get('u')).used).toBe(11);
    expect((await two.get('u')).used).toBe(11);
    // Counting goes on from there, in both.
    await two.add('u', 2);
    expect((await one.get('u')).used).toBe(13);
    // A lower count seen later lowers nothing.
    await one.raise('u', 12, WINDOW);
    expect((await two.get('u')).used).toBe(13);
    // A raised count expires like a counted one, whether the raise found it or made it.
    await two.raise('v', 4, WINDOW);
    for (const key of ['u', 'v']) {
      const ttl = await a.pttl(`raise:${key}:${WINDOW}`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(120_000);
    }
    expect((await one.get('v')).used).toBe(4);
  });

  it('counts a call made while Redis is paused once, though Redis runs the command it timed out on when it wakes', async () => {
    const [{ counter: paused }, { counter: other }] = await Promise.all([instance('pause'), instance('pause')]);
    await paused.add('u', 3);
    redis.child.kill('SIGSTOP');
    try {
      // Each add times out (storeClient's command timeout) and the count goes on in this process.
      for (let i = 1; i <= 5; i++) expect((await paused.add('u')).used).toBe(3 + i);
    } finally {
      redis.child.kill('SIGCONT');
    }
    // Redis ran the five commands when it woke: the fleet's count is 8, and stays 8 after this process speaks again.
    await vi.waitFor(async () => expect((await other.get('u')).used).toBe(8), { timeout: 30_000, interval: 20 });
    expect((await paused.add('u', 0)).used).toBe(8);
    expect((await paused.get('u')).used).toBe(8);
    expect((await other.get('u')).used).toBe(8);
  }, 60_000);

  it('adds a call counted while Redis is away there once it is back', async () => {
    const { counter, client: a } = await instance('away');
    await counter.add('u', 3);
    const exited = new Promise((resolve) => redis.child.once('exit', resolve));
    redis.child.kill('SIGKILL');
    await exited;
    await vi.waitFor(() => expect(a.status).not.toBe('ready'), { timeout: 30_000, interval: 20 });
    // Not sent: each is owed to Redis, and counted here meanwhile.
    for (let i = 1; i <= 4; i++) expect((await counter.add('u')).used).toBe(3 + i);
    // A raise while Redis is away counts here only (GitLab saw 8: more than this process counted).
    await counter.raise('u', 8, WINDOW);
    expect((await counter.get('u')).used).toBe(8);
    redis = await startRedis(redis.port);
    await ready(a);
    // GitLab saw 9, the 4 counted meanwhile among them: they reach Redis first, then the raise: 9, not 4 + 9. (The Redis
    // started again knows nothing of the 3 before.)
    await counter.raise('u', 9, WINDOW);
    expect((await (await instance('away')).counter.get('u')).used).toBe(9);
    expect((await counter.add('u')).used).toBe(10);
  }, 60_000);
});
