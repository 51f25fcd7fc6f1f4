/**
 * How long a stored answer will still be served (AnswerCache.servedUntil),
 * which warm answers (src/server/warm-answers.ts) trust without checking
 * each source again while the cache's count of changes stands: never past
 * the answer's age, nor past the end of its project's webhook window where
 * the webhook age is what keeps it, and every drop or webhook mark is a
 * change. Driven directly, on a clock the test moves.
 */
import { describe, expect, it } from 'vitest';
import { newCacheUsage } from '../../src/request-scope.js';
import { AnswerCache, type RawAnswer } from '../../src/upstreams/answer-cache.js';
import { MemoryStore } from '../../src/upstreams/cache-store.js';

const START = 1_700_000_000_000;

function harness() {
  let clock = START;
  const now = () => clock;
  const cache = new AnswerCache({
    store: new MemoryStore(1 << 20, () => {}, now),
    keySecret: 'k',
    maxAgeMs: 5_000,
    webhookMaxAgeMs: 60_000,
    webhookQuietMs: 60_000,
    now,
  });
  // Drops can reach it (in this process only): the webhook age applies from now on.
  cache.listen({ publish: () => {}, listen: () => () => {} });
  /** Reads project 7's job page: the source an answer built on it would have. */
  const readJobs = async () => {
    const usage = newCacheUsage();
    await cache.read(
      {
        upstream: 'gitlab',
        path: ['projects', 7, 'jobs'],
        url: '/api/v4/projects/7/jobs',
        credentials: { 'private-token': 't' },
        scope: { requestId: 'r', cache: usage },
        signal: undefined,
      },
      async (): Promise<RawAnswer> => ({ status: 200, headers: {}, text: '[{"id":1,"status":"running"}]', bytes: 1 }),
      () => new Error('cancelled'),
    );
    const source = usage.sources?.[0];
    if (!source) throw new Error('not stored');
    return source;
  };
  return {
    cache,
    readJobs,
    tick: (ms: number) => {
      clock += ms;
    },
  };
}

describe('how long a stored answer is served', () => {
  it('is its plain age where no webhook is heard, or less where the caller accepts less', async () => {
    const h = harness();
    const source = await h.readJobs();
    expect(h.cache.servedUntil(source, undefined)).toBe(START + 5_000);
    expect(h.cache.servedUntil(source, 2_000)).toBe(START + 2_000);
    h.tick(4_999);
    expect(h.cache.servedUntil(source, undefined)).toBe(START + 5_000);
    h.tick(1);
    expect(h.cache.servedUntil(source, undefined)).toBe(Number.NEGATIVE_INFINITY);
  });

  it("holds the webhook age only until the project's webhook window ends", async () => {
    const h = harness();
    h.cache.webhookDelivered(7, 'job');
    // Read 50 s into the window (60 s): the webhook age (60 s) would keep it to 110 s, the window only to 60 s.
    h.tick(50_000);
    const source = await h.readJobs();
    expect(h.cache.servedUntil(source, undefined)).toBe(START + 60_000);
    h.tick(9_999);
    expect(h.cache.servedUntil(source, undefined)).toBe(START + 60_000);
    // The window over and the plain age long past: not served, so judged at once.
    h.tick(1);
    expect(h.cache.servedUntil(source, undefined)).toBe(Number.NEGATIVE_INFINITY);
  });

  it('counts every drop and webhook mark as a change, and a drop ends it at once', async () => {
    const h = harness();
    const listened = h.cache.generation;
    h.cache.listen({ publish: () => {}, listen: () => () => {} });
    // Listening again changes when the webhook age may apply from.
    expect(h.cache.generation).toBe(listened + 1);
    const source = await h.readJobs();
    const before = h.cache.generation;
    h.tick(1_000);
    expect(h.cache.generation).toBe(before);
    h.cache.afterWrite('gitlab', ['projects', 8, 'star'], ['gitlab:project:8']);
    expect(h.cache.generation).toBe(before + 1);
    expect(h.cache.servedUntil(source, undefined)).toBe(START + 5_000);
    h.cache.webhookDelivered(7, 'job');
    expect(h.cache.generation).toBe(before + 2);
    // The webhook dropped project 7's job pages.
    expect(h.cache.servedUntil(source, undefined)).toBe(Number.NEGATIVE_INFINITY);
  });
});
