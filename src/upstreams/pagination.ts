/**
 * Relay windows over offset pagination: opaque cursors that hold an offset,
 * the window a `first/after/last/before` set asks for, and the fewest
 * `page`/`per_page` calls that cover it. Pure, apart from the page fetcher
 * that `fetchWindow` is given.
 */
import { InputError, UpstreamError } from '../errors.js';

/** GitLab's per_page maximum, and so the most one connection page may ask for. */
export const MAX_PAGE_SIZE = 100;

export interface WindowArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/** One upstream page: its items, the list's total when sent, and whether a next page exists. */
export interface Page<T> {
  items: T[];
  total: number | null;
  hasNext: boolean;
}

export type PageFetcher<T> = (page: number, perPage: number) => Promise<Page<T>>;

export interface Window<T> {
  /** The items of the window, in list order. */
  items: T[];
  /** Offset of the first item in the whole list. */
  start: number;
  total: number | null;
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

/**
 * Where a cursor points: the item's offset in the list and, for lists read by
 * keyset, its id (the key the next page starts after). Cursors issued before
 * keys existed hold an offset only and keep working.
 */
export interface CursorPosition {
  offset: number;
  key: number | null;
}

/** An opaque cursor for the item at `offset` (0-based), with its key when the list is read by keyset. */
export function encodeCursor(offset: number, key: number | null = null): string {
  return Buffer.from(key === null ? `offset:${offset}` : `offset:${offset};id:${key}`).toString('base64url');
}

/** Where a cursor points; throws InputError for anything this gateway did not issue. */
export function decodeCursorPosition(cursor: string, argument: string): CursorPosition {
  const text = /^[A-Za-z0-9_-]{1,64}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const match = /^offset:(\d{1,9})(?:;id:(\d{1,16}))?$/.exec(text);
  const key = match?.[2] === undefined ? null : Number(match[2]);
  if (!match || (key !== null && !Number.isSafeInteger(key))) throw new InputError(`"${argument}" is not a valid cursor.`, [argument]);
  return { offset: Number(match[1]), key };
}

/** The offset a cursor holds; throws InputError for anything this gateway did not issue. */
export function decodeCursor(cursor: string, argument: string): number {
  return decodeCursorPosition(cursor, argument).offset;
}

export function checkSize(value: number | null | undefined, argument: string): number | null {
  if (value === null || value === undefined) return null;
  if (!Number.isInteger(value) || value < 0 || value > MAX_PAGE_SIZE) {
    throw new InputError(`"${argument}" must be between 0 and ${MAX_PAGE_SIZE}, got ${value}.`, [argument]);
  }
  return value;
}

/** The requested window: a closed range, or the last `count` items before an unknown end. */
export type Range = { kind: 'range'; start: number; end: number } | { kind: 'tail'; start: number; count: number };

/** Validates the arguments and turns them into a range of offsets. */
export function resolveRange(args: WindowArgs, defaultSize: number): Range {
  const first = checkSize(args.first, 'first');
  const last = checkSize(args.last, 'last');
  const after = args.after ? decodeCursor(args.after, 'after') : null;
  const before = args.before ? decodeCursor(args.before, 'before') : null;
  const start = after === null ? 0 : after + 1;
  let end = before;
  if (first !== null) end = end === null ? start + first : Math.min(end, start + first);
  if (first === null && last === null && end === null) end = start + defaultSize;
  if (last !== null) {
    if (end === null) return { kind: 'tail', start, count: last };
    return { kind: 'range', start: Math.max(start, end - last), end: Math.max(start, end) };
  }
  return { kind: 'range', start, end: Math.max(start, end ?? start) };
}

/**
 * The fewest calls that cover [start, end), and among those the smallest
 * page: `first: 30, after: <item 10>` is one call of 40 rather than two of 30.
 */
export function planPages(start: number, end: number): { perPage: number; pages: number[] } {
  const length = Math.max(1, end - start);
  for (let calls = 1; ; calls++) {
    for (let perPage = Math.max(1, Math.ceil(length / calls)); perPage <= MAX_PAGE_SIZE; perPage++) {
      const firstPage = Math.floor(start / perPage);
      const lastPage = Math.floor((start + length - 1) / perPage);
      if (lastPage - firstPage + 1 <= calls) {
        const pages: number[] = [];
        for (let p = firstPage; p <= lastPage; p++) pages.push(p + 1);
        return { perPage, pages };
      }
    }
  }
}

/** A page holds at most what was asked for: more (a broken or hostile upstream) is its error, never data. */
function checkedPage<T>(page: Page<T>, perPage: number): Page<T> {
  if (page.items.length > perPage) {
    throw new UpstreamError(`The upstream sent ${page.items.length} items for a page of ${perPage}.`, 'UPSTREAM_ERROR', {
      name: 'upstream',
      status: 200,
      method: 'GET',
      path: '',
    });
  }
  return page;
}

async function fetchRange<T>(start: number, end: number, fetchPage: PageFetcher<T>): Promise<Window<T>> {
  const { perPage, pages } = planPages(start, end);
  const results = await Promise.all(pages.map(async (page) => checkedPage(await fetchPage(page, perPage), perPage)));
  const firstOffset = ((pages[0] ?? 1) - 1) * perPage;
  const all: T[] = [];
  for (const result of results) {
    for (const item of result.items) all.push(item);
    if (result.items.length < perPage) break;
  }
  const lastResult = results[results.length - 1];
  const total = lastResult?.total ?? results[0]?.total ?? null;
  const items = end > start ? all.slice(start - firstOffset, end - firstOffset) : [];
  const fetchedEnd = firstOffset + all.length;
  let hasNextPage: boolean;
  if (total !== null) hasNextPage = end < total;
  else hasNextPage = fetchedEnd > end || (fetchedEnd === end && (lastResult?.hasNext ?? false));
  return { items, start, total, hasNextPage, hasPreviousPage: start > 0 };
}

/**
 * Fetches the window the arguments ask for with the fewest page calls.
 * `last` without `before` needs the list's total: one call learns it (and
 * serves the window when the list is short enough), a second fetches the tail.
 */
export async function fetchWindow<T>(args: WindowArgs, defaultSize: number, fetchPage: PageFetcher<T>): Promise<Window<T>> {
  const range = resolveRange(args, defaultSize);
  if (range.kind === 'range') return fetchRange(range.start, range.end, fetchPage);
  const probeSize = Math.max(1, range.count);
  const probe = checkedPage(await fetchPage(1, probeSize), probeSize);
  if (probe.total === null && probe.hasNext) {
    throw new InputError(
      'The upstream does not report this list\'s total (above 10,000 items, or a list it never counts), so "last" needs "before"; page with "first" instead.',
      ['last'],
    );
  }
  const total = probe.total ?? probe.items.length;
  const start = Math.max(range.start, total - range.count);
  if (total <= probeSize) {
    const items = range.count === 0 ? [] : probe.items.slice(start, total);
    return { items, start, total: probe.total, hasNextPage: false, hasPreviousPage: start > 0 };
  }
  return fetchRange(start, total, fetchPage);
}

/** A read of exactly `limit` items from `offset`; `full` when as many came back as asked. */
export type SliceFetcher<T> = (offset: number, limit: number) => Promise<{ items: T[]; full: boolean }>;

/**
 * The window the arguments ask for, read as exactly that slice: one call, not
 * aligned to pages, no look-ahead item. For an upstream that orders each page
 * it returns its own way (Hubzilla's network/stream: SQL picks the threads by
 * `commented`, one-second ties and all, then PHP re-sorts them with another
 * tie-break), any other page than the window itself is a different set of
 * items, and a walk would lose some and repeat others. hasNextPage is true
 * when the slice came back full, so a walk may end on one empty page.
 */
export async function fetchSlice<T>(args: WindowArgs, defaultSize: number, fetchItems: SliceFetcher<T>): Promise<Window<T>> {
  const range = resolveRange(args, defaultSize);
  if (range.kind === 'tail') {
    throw new InputError('This list has no total, so "last" needs "before"; page with "first" instead.', ['last']);
  }
  const limit = range.end - range.start;
  if (limit === 0) return { items: [], start: range.start, total: null, hasNextPage: true, hasPreviousPage: range.start > 0 };
  const slice = await fetchItems(range.start, limit);
  checkedPage({ items: slice.items, total: null, hasNext: false }, limit);
  return { items: slice.items, start: range.start, total: null, hasNextPage: slice.full, hasPreviousPage: range.start > 0 };
}

/** One page read by keyset: the items after a key, in list order, and whether more follow. */
export interface KeyPage<T> {
  items: T[];
  hasNext: boolean;
}

/** Reads at most `limit` items after the item whose key is `key`. */
export type KeyPageFetcher<T> = (key: number, limit: number) => Promise<KeyPage<T>>;

/**
 * A forward window after a cursor that holds a key, read by keyset: one call
 * whatever the depth, and past GitLab's offset limit (50,000). Anything else
 * (the first page, `last`, `before`, a cursor holding only an offset) is read
 * by offset, as fetchWindow reads it. Keyset pages carry no total.
 */
export async function fetchKeysetWindow<T>(
  args: WindowArgs,
  defaultSize: number,
  fetchAfter: KeyPageFetcher<T>,
  fetchPage: PageFetcher<T>,
): Promise<Window<T>> {
  const after = args.after && args.last == null && args.before == null ? decodeCursorPosition(args.after, 'after') : null;
  if (after?.key == null) return fetchWindow(args, defaultSize, fetchPage);
  const first = checkSize(args.first, 'first') ?? defaultSize;
  const start = after.offset + 1;
  // `first: 0` still asks for one item: it is how the window learns whether a next page exists.
  const limit = Math.max(first, 1);
  const page = await fetchAfter(after.key, limit);
  checkedPage({ items: page.items, total: null, hasNext: false }, limit);
  const items = page.items.slice(0, first);
  return { items, start, total: null, hasNextPage: first === 0 ? page.items.length > 0 : page.hasNext, hasPreviousPage: true };
}
