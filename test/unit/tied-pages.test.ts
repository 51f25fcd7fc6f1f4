/**
 * Exact pages over a list whose ties come in another order for every window
 * asked (as network/stream's SQL gives them): walks forward and backward at
 * page sizes 1 to 7 over ties larger than any window, against a fake hub that
 * counts its calls.
 */
import { describe, expect, it } from 'vitest';
import { threadsAfter, threadsBefore, type Rank, type TiedPage } from '../../src/upstreams/hubzilla/tied-pages.js';

interface Thread {
  id: string;
  key: string;
}

/** 3 threads at 12:00:03, a tie of 60 at 12:00:02, 4 at 12:00:01, 2 at 12:00:00: newest first. */
const THREADS: Thread[] = [
  ...Array.from({ length: 3 }, (_, i) => ({ id: `a${i}`, key: '2026-11-20T12:00:03Z' })),
  ...Array.from({ length: 60 }, (_, i) => ({ id: `t${String(i).padStart(2, '0')}`, key: '2026-11-20T12:00:02Z' })),
  ...Array.from({ length: 4 }, (_, i) => ({ id: `b${i}`, key: '2026-11-20T12:00:01Z' })),
  ...Array.from({ length: 2 }, (_, i) => ({ id: `c${i}`, key: '2026-11-20T12:00:00Z' })),
];

/** The hub: strict by key, each tie shuffled by a seed of the window asked. */
function hub(calls: { offset: number; limit: number }[]) {
  return async (offset: number, limit: number) => {
    calls.push({ offset, limit });
    const seed = offset * 7919 + limit * 104729;
    const rank = (t: Thread) => {
      let h = seed;
      for (const c of t.id) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
      return h;
    };
    const sorted = [...THREADS].sort((a, b) => (a.key < b.key ? 1 : a.key > b.key ? -1 : rank(a) - rank(b)));
    const items = sorted.slice(offset, offset + limit);
    return { items, full: items.length === limit };
  };
}

const rankOf = (t: Thread): Rank => ({ key: t.key, id: t.id });

describe('threadsAfter and threadsBefore', () => {
  it.each([1, 2, 3, 5, 7])('walk a tie of 60, larger than any window, exactly once each way at page size %i', async (size) => {
    const calls: { offset: number; limit: number }[] = [];
    const fetch = hub(calls);
    const forward: string[] = [];
    let after: string | null = null;
    let last = '';
    for (let n = 0; n < 200; n++) {
      const page: TiedPage<Thread> = await threadsAfter(fetch, rankOf, size, after);
      forward.push(...page.items.map((i) => i.node.id));
      last = page.items.at(-1)?.cursor ?? last;
      if (!page.hasNextPage) break;
      after = last;
    }
    expect(forward).toHaveLength(THREADS.length);
    expect(new Set(forward).size).toBe(THREADS.length);
    // The gateway's order: newest second first, message id within it.
    expect(forward.slice(3, 6)).toEqual(['t00', 't01', 't02']);

    const backward: string[] = [forward.at(-1) ?? ''];
    let before: string | null = last;
    for (let n = 0; n < 200 && before; n++) {
      const page: TiedPage<Thread> = await threadsBefore(fetch, rankOf, size, before);
      backward.unshift(...page.items.map((i) => i.node.id));
      if (!page.hasPreviousPage) break;
      before = page.items[0]?.cursor ?? null;
    }
    expect(backward).toEqual(forward);
    // A page inside the tie read a window large enough for all 60 of it: never more than a few calls a page.
    expect(calls.length).toBeLessThanOrEqual(4 * 2 * Math.ceil(THREADS.length / size));
  });

  it('refuses a cursor it did not make', async () => {
    await expect(threadsAfter(hub([]), rankOf, 3, 'bm90IGEgY3Vyc29y')).rejects.toThrow('"after" is not a cursor of this list.');
    await expect(threadsBefore(hub([]), rankOf, 3, 'WzEsMiwzXQ')).rejects.toThrow('"before" is not a cursor of this list.');
  });
});
