/**
 * Exact pages over a list whose ties come in another order for every window
 * asked (as network/stream's SQL gives them): walks forward and backward at
 * page sizes 1 to 7 over ties larger than any window, against a fake hub that
 * counts its calls.
 */
import { createHmac } from 'node:crypto';
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
/** The gateway signs cursors per list; here, one list. */
const seal = (text: string) => createHmac('sha256', 'test cursor key').update(text).digest('base64url').slice(0, 22);

describe('threadsAfter and threadsBefore', () => {
  it.each([1, 2, 3, 5, 7])('walk a tie of 60, larger than any window, exactly once each way at page size %i', async (size) => {
    const calls: { offset: number; limit: number }[] = [];
    const fetch = hub(calls);
    const forward: string[] = [];
    let after: string | null = null;
    let last = '';
    for (let n = 0; n < 200; n++) {
      const page: TiedPage<Thread> = await threadsAfter(fetch, rankOf, size, after, seal);
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
      const page: TiedPage<Thread> = await threadsBefore(fetch, rankOf, size, before, seal);
      backward.unshift(...page.items.map((i) => i.node.id));
      if (!page.hasPreviousPage) break;
      before = page.items[0]?.cursor ?? null;
    }
    expect(backward).toEqual(forward);
    // A page inside the tie read a window large enough for all 60 of it: never more than a few calls a page.
    expect(calls.length).toBeLessThanOrEqual(4 * 2 * Math.ceil(THREADS.length / size));
  });

  it('refuses a cursor it did not make, or made for another list, before reading anything', async () => {
    const calls: { offset: number; limit: number }[] = [];
    await expect(threadsAfter(hub(calls), rankOf, 3, 'bm90IGEgY3Vyc29y', seal)).rejects.toThrow('"after" is not a cursor of this list.');
    await expect(threadsBefore(hub(calls), rankOf, 3, 'WzEsMiwzXQ', seal)).rejects.toThrow('"before" is not a cursor of this list.');
    // Well-formed, naming an offset far down the list, but not signed by the gateway: it would have cost growing windows.
    const forged = Buffer.from(JSON.stringify([5000, '2026-11-20T12:00:02Z', 't30'])).toString('base64url');
    await expect(threadsAfter(hub(calls), rankOf, 3, `${forged}.${'A'.repeat(22)}`, seal)).rejects.toThrow('"after" is not a cursor of this list.');
    const other = (text: string) => createHmac('sha256', 'another list').update(text).digest('base64url').slice(0, 22);
    const page = await threadsAfter(hub(calls), rankOf, 3, null, other);
    calls.length = 0;
    await expect(threadsAfter(hub(calls), rankOf, 3, page.items[2]?.cursor ?? '', seal)).rejects.toThrow('"after" is not a cursor of this list.');
    expect(calls).toEqual([]);
  });

  it('reads back, instead of ending the list, when threads deleted above the cursor moved the rest up past the window', async () => {
    // 40 threads one second apart, newest first, at offsets as a real hub pages them.
    let threads = Array.from({ length: 40 }, (_, i) => ({ id: `m${String(i).padStart(2, '0')}`, key: `2026-11-20T12:00:${String(59 - i).padStart(2, '0')}Z` }));
    const fetch = async (offset: number, limit: number) => {
      const items = threads.slice(offset, offset + limit);
      return { items, full: items.length === limit };
    };
    const first = await threadsAfter(fetch, rankOf, 30, null, seal);
    expect(first.items.at(-1)?.node.id).toBe('m29');
    // 29 threads above the cursor are deleted: m29 is now at offset 0, and the ten after it at 1 to 10.
    threads = threads.slice(29);
    const next = await threadsAfter(fetch, rankOf, 5, first.items.at(-1)?.cursor ?? null, seal);
    expect(next.items.map((i) => i.node.id)).toEqual(['m30', 'm31', 'm32', 'm33', 'm34']);
    expect(next.hasNextPage).toBe(true);
  });
});
