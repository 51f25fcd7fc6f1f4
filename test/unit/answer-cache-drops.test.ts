/**
 * The answer cache's record of drops (src/upstreams/answer-cache.ts) is
 * bounded by age and by a count, and never forgets a drop that an answer
 * it covers could still be served past: what it cannot remember counts as
 * dropped. Driven directly, on a clock the test moves, with a small bound.
 */
import { describe, expect, it } from 'vitest';
import { AnswerCache, type RawAnswer } from '../../src/upstreams/answer-cache.js';
import { MemoryStore } from '../../src/upstreams/cache-store.js';

function harness(maxDrops: number) {
  let clock = 1_700_000_000_000;
  const now = () => clock;
  const cache = new AnswerCache({
    store: new MemoryStore(1 << 20, () => {}, now),
    keySecret: 'k',
    maxAgeMs: 60_000,
    webhookMaxAgeMs: 60_000,
    webhookQuietMs: 60_000,
    maxDrops,
    now,
  });
  let sent = 0;
  let stars = 3;
  const read = (id: number) =>
    cache.read(
      {
        upstream: 'gitlab',
        path: ['projects', id],
        url: `/api/v4/projects/${id}`,
        credentials: { 'private-token': 't' },
        scope: { requestId: 'r' },
        signal: undefined,
      },
      async (): Promise<RawAnswer> => {
        sent++;
        return { status: 200, headers: {}, text: JSON.stringify({ id, star_count: stars }), bytes: 1 };
      },
      () => new Error('cancelled'),
    );
  return {
    cache,
    read,
    sent: () => sent,
    star: () => {
      stars++;
    },
    tick: (ms: number) => {
      clock += ms;
    },
  };
}

describe('the record of drops', () => {
  it('serves an answer again only until a write drops it, however many drops come after', async () => {
    const h = harness(10);
    await h.read(1);
    await h.read(1);
    expect(h.sent()).toBe(1);
    h.star();
    h.cache.afterWrite('gitlab', ['projects', 1, 'star'], ['gitlab:project:1']);
    // More drops of other projects than the record holds, all within the entry's age.
    for (let i = 100; i < 125; i++) h.cache.afterWrite('gitlab', ['projects', i, 'star'], [`gitlab:project:${i}`]);
    const after = await h.read(1);
    expect(JSON.parse(after.text).star_count).toBe(4);
    expect(h.sent()).toBe(2);
  });

  it('counts as dropped whatever it had to forget for room, and forgets by age without that', async () => {
    const h = harness(10);
    await h.read(1);
    // Young drops of other projects past the bound: the oldest are forgotten, and everything read before them counts as dropped.
    for (let i = 100; i < 125; i++) h.cache.afterWrite('gitlab', ['projects', i, 'star'], [`gitlab:project:${i}`]);
    await h.read(1);
    expect(h.sent()).toBe(2);
    // Read after them, it serves again.
    await h.read(1);
    expect(h.sent()).toBe(2);
    // Past the longest age, the drops left are forgotten by age alone: an answer read after them still serves.
    h.tick(120_000);
    await h.read(1);
    expect(h.sent()).toBe(3);
    h.cache.afterWrite('gitlab', ['projects', 300, 'star'], ['gitlab:project:300']);
    await h.read(1);
    expect(h.sent()).toBe(3);
  });
});
