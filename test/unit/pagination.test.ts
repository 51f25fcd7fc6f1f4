import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import {
  decodeCursor,
  decodeCursorPosition,
  encodeCursor,
  fetchKeysetWindow,
  fetchWindow,
  planPages,
  resolveRange,
  type Page,
} from '../../src/upstreams/pagination.js';

/** An offset-paginated list of `size` numbers that records every page call. */
function list(size: number, options: { total?: boolean } = {}) {
  const calls: { page: number; perPage: number }[] = [];
  const fetchPage = async (page: number, perPage: number): Promise<Page<number>> => {
    calls.push({ page, perPage });
    const start = (page - 1) * perPage;
    const items = Array.from({ length: Math.max(0, Math.min(perPage, size - start)) }, (_, i) => start + i);
    return { items, total: options.total === false ? null : size, hasNext: start + perPage < size };
  };
  return { calls, fetchPage };
}

describe('cursors', () => {
  it('round-trips an offset through an opaque cursor', () => {
    for (const offset of [0, 1, 99, 123_456]) expect(decodeCursor(encodeCursor(offset), 'after')).toBe(offset);
    expect(encodeCursor(5)).not.toContain('5');
  });

  it('round-trips a key beside the offset, and reads cursors issued without one', () => {
    expect(decodeCursorPosition(encodeCursor(50_123, 2 ** 53 - 1), 'after')).toEqual({ offset: 50_123, key: 2 ** 53 - 1 });
    expect(decodeCursorPosition(encodeCursor(7), 'after')).toEqual({ offset: 7, key: null });
    expect(decodeCursor(encodeCursor(7, 4_000_001_001), 'after')).toBe(7);
  });

  it('rejects cursors it did not issue', () => {
    const forged = ['offset:1;id:', 'offset:1;id:-5', 'offset:1;id:9007199254740993', 'offset:1;key:5'].map((text) => Buffer.from(text).toString('base64url'));
    for (const bad of ['', 'abc', 'b2Zmc2V0Oi0x', `${encodeCursor(1)}!!`, Buffer.from('offset:12a').toString('base64url'), ...forged]) {
      expect(() => decodeCursor(bad, 'after')).toThrow(InputError);
    }
  });
});

describe('resolveRange', () => {
  it('maps first/after to a range', () => {
    expect(resolveRange({ first: 30, after: encodeCursor(9) }, 20)).toEqual({ kind: 'range', start: 10, end: 40 });
  });

  it('uses the default size when neither first nor last is given', () => {
    expect(resolveRange({}, 20)).toEqual({ kind: 'range', start: 0, end: 20 });
  });

  it('maps last/before to a range ending at before', () => {
    expect(resolveRange({ last: 5, before: encodeCursor(20) }, 20)).toEqual({ kind: 'range', start: 15, end: 20 });
    expect(resolveRange({ last: 50, before: encodeCursor(3) }, 20)).toEqual({ kind: 'range', start: 0, end: 3 });
  });

  it('needs the total for last without before', () => {
    expect(resolveRange({ last: 5 }, 20)).toEqual({ kind: 'tail', start: 0, count: 5 });
  });

  it('rejects first and last outside 0..100', () => {
    expect(() => resolveRange({ first: 101 }, 20)).toThrow(/between 0 and 100/);
    expect(() => resolveRange({ first: -1 }, 20)).toThrow(InputError);
    expect(() => resolveRange({ last: 1000 }, 20)).toThrow(InputError);
  });
});

describe('planPages', () => {
  it('covers a window inside one page with one call of the smallest fitting size', () => {
    expect(planPages(10, 40)).toEqual({ perPage: 40, pages: [1] });
    expect(planPages(0, 20)).toEqual({ perPage: 20, pages: [1] });
    expect(planPages(20, 40)).toEqual({ perPage: 20, pages: [2] });
  });

  it('uses two calls only when no single page can hold the window', () => {
    const plan = planPages(150, 250);
    expect(plan.pages).toHaveLength(2);
    expect(plan.perPage).toBeLessThanOrEqual(100);
  });

  it('always covers the whole window', () => {
    for (let start = 0; start < 300; start += 7) {
      for (const length of [1, 2, 19, 20, 21, 50, 99, 100]) {
        const { perPage, pages } = planPages(start, start + length);
        expect(perPage).toBeLessThanOrEqual(100);
        expect(((pages[0] ?? 0) - 1) * perPage).toBeLessThanOrEqual(start);
        expect((pages[pages.length - 1] ?? 0) * perPage).toBeGreaterThanOrEqual(start + length);
        expect(pages.length).toBeLessThanOrEqual(2);
      }
    }
  });
});

describe('fetchWindow', () => {
  it('fetches first: 30 after item 10 with one call', async () => {
    const { calls, fetchPage } = list(100);
    const window = await fetchWindow({ first: 30, after: encodeCursor(9) }, 20, fetchPage);
    expect(calls).toEqual([{ page: 1, perPage: 40 }]);
    expect(window.items).toEqual(Array.from({ length: 30 }, (_, i) => i + 10));
    expect(window).toMatchObject({ start: 10, total: 100, hasNextPage: true, hasPreviousPage: true });
  });

  it('reports the last page correctly', async () => {
    const { fetchPage } = list(45);
    const window = await fetchWindow({ first: 20, after: encodeCursor(39) }, 20, fetchPage);
    expect(window.items).toEqual([40, 41, 42, 43, 44]);
    expect(window).toMatchObject({ hasNextPage: false, hasPreviousPage: true, total: 45 });
  });

  it('handles an empty list', async () => {
    const { fetchPage } = list(0);
    const window = await fetchWindow({ first: 10 }, 20, fetchPage);
    expect(window).toEqual({ items: [], start: 0, total: 0, hasNextPage: false, hasPreviousPage: false });
  });

  it('answers first: 0 with no items but a total', async () => {
    const { calls, fetchPage } = list(7);
    const window = await fetchWindow({ first: 0 }, 20, fetchPage);
    expect(window.items).toEqual([]);
    expect(window.total).toBe(7);
    expect(window.hasNextPage).toBe(true);
    expect(calls).toHaveLength(1);
  });

  it('fetches last: 5 of a short list in one call', async () => {
    const { calls, fetchPage } = list(4);
    const window = await fetchWindow({ last: 5 }, 20, fetchPage);
    expect(window.items).toEqual([0, 1, 2, 3]);
    expect(calls).toHaveLength(1);
  });

  it('fetches last: 5 of a long list with a probe and one window call', async () => {
    const { calls, fetchPage } = list(53);
    const window = await fetchWindow({ last: 5 }, 20, fetchPage);
    expect(window.items).toEqual([48, 49, 50, 51, 52]);
    expect(window).toMatchObject({ start: 48, hasNextPage: false, hasPreviousPage: true });
    expect(calls).toHaveLength(2);
  });

  it('pages backwards with last/before', async () => {
    const { fetchPage } = list(53);
    const window = await fetchWindow({ last: 3, before: encodeCursor(10) }, 20, fetchPage);
    expect(window.items).toEqual([7, 8, 9]);
    expect(window).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
  });

  it('uses the next-page flag when the total is unknown', async () => {
    const { fetchPage } = list(40, { total: false });
    expect((await fetchWindow({ first: 20 }, 20, fetchPage)).hasNextPage).toBe(true);
    expect((await fetchWindow({ first: 20, after: encodeCursor(19) }, 20, fetchPage)).hasNextPage).toBe(false);
    expect((await fetchWindow({ first: 20 }, 20, fetchPage)).total).toBeNull();
  });

  it('refuses last without before when the total is unknown', async () => {
    const { fetchPage } = list(500, { total: false });
    await expect(fetchWindow({ last: 5 }, 20, fetchPage)).rejects.toThrow(/needs "before"/);
  });
});

describe('fetchKeysetWindow', () => {
  /** Ids 1..size in order; records every keyset call. */
  function keyed(size: number) {
    const calls: { key: number; limit: number }[] = [];
    const fetchAfter = async (key: number, limit: number) => {
      calls.push({ key, limit });
      const items = Array.from({ length: Math.max(0, Math.min(limit, size - key)) }, (_, i) => key + 1 + i);
      return { items, hasNext: key + limit < size };
    };
    return { calls, fetchAfter };
  }

  it('reads a forward page after a keyed cursor with one keyset call, at any depth and without a total', async () => {
    const { calls, fetchAfter } = keyed(200_000);
    const offsets = list(0);
    const window = await fetchKeysetWindow({ first: 3, after: encodeCursor(120_000, 120_001) }, 20, fetchAfter, offsets.fetchPage);
    expect(window).toEqual({ items: [120_002, 120_003, 120_004], start: 120_001, total: null, hasNextPage: true, hasPreviousPage: true });
    expect(calls).toEqual([{ key: 120_001, limit: 3 }]);
    expect(offsets.calls).toEqual([]);
  });

  it('reads by offset without a keyed after, or backwards', async () => {
    const { calls, fetchAfter } = keyed(50);
    const offsets = list(50);
    await fetchKeysetWindow({ first: 5 }, 20, fetchAfter, offsets.fetchPage);
    await fetchKeysetWindow({ first: 5, after: encodeCursor(9) }, 20, fetchAfter, offsets.fetchPage);
    await fetchKeysetWindow({ last: 2, before: encodeCursor(9, 10) }, 20, fetchAfter, offsets.fetchPage);
    expect(calls).toEqual([]);
    expect(offsets.calls).toHaveLength(3);
  });

  it('ends the walk on the last item and refuses an oversized keyset page', async () => {
    const { fetchAfter } = keyed(10);
    const end = await fetchKeysetWindow({ first: 5, after: encodeCursor(4, 5) }, 20, fetchAfter, list(0).fetchPage);
    expect(end).toMatchObject({ items: [6, 7, 8, 9, 10], hasNextPage: false });
    const hostile = async () => ({ items: [1, 2, 3], hasNext: false });
    await expect(fetchKeysetWindow({ first: 2, after: encodeCursor(0, 1) }, 20, hostile, list(0).fetchPage)).rejects.toThrow('3 items for a page of 2');
  });
});
