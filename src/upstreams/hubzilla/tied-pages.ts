/**
 * Exact pages of network/stream, whose SQL orders threads by one timestamp
 * (`commented`, or `created` for order=post) with nothing to break ties:
 * MariaDB orders a tie as its plan for each LIMIT/OFFSET goes, so offset
 * pages repeat some tied threads and lose others (up to 8 of a dozen posted
 * in one second, on a real 8.8.7 hub, under `wall`, order=post or
 * minCloseness alike). An overlap window cannot recover a tie group larger
 * than itself; and the date filters that could isolate one also drop the
 * comments of the threads they keep.
 *
 * So the gateway pages by its own total order, which the hub's order only
 * refines: timestamp descending, then message id ascending. A cursor holds
 * a thread's timestamp and message id (where the next page starts) and the
 * hub offset of the first thread with that timestamp (where to read). A
 * window is read from the hub around it, and only whole tie groups are
 * used: a group the window may have cut (its first one, unless it starts
 * the list, and its last one, unless the list ends there) is read again in
 * a larger window. Every thread is returned once in each direction whatever
 * order the hub gives a tie, for as long as the list is not changed while it
 * is walked (a thread posted or deleted above the cursor moves the offsets,
 * which the window's slack absorbs up to SLACK threads).
 */
import { InputError, UpstreamError } from '../../errors.js';

/** A thread's place in the gateway's order: its timestamp (ISO 8601, so that text order is time order) and message id. */
export interface Rank {
  key: string;
  id: string;
}

interface Position extends Rank {
  /** Offset in the hub's list of the first thread with this key. */
  offset: number;
}

/** Reads `limit` threads of the hub's list from `offset`; `full` when the hub sent `limit` (more may follow). */
export type ThreadWindowFetcher<T> = (offset: number, limit: number) => Promise<{ items: T[]; full: boolean }>;

export interface TiedPage<T> {
  items: { node: T; cursor: string }[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

/** Threads read beyond the page on each side, for offsets that moved and for ties at the edges. */
const SLACK = 8;
/** The largest window read: a tie group larger than this (threads in one second) cannot be read whole. */
const MAX_WINDOW = 1_000;

function precedes(a: Rank, b: Rank): boolean {
  return a.key > b.key || (a.key === b.key && a.id < b.id);
}

/**
 * Signs a cursor's text for one list (its channel and filters): a cursor
 * names a hub offset to read around, so one the gateway did not issue, or
 * issued for another list, is refused before any read instead of costing
 * growing windows.
 */
export type CursorSeal = (text: string) => string;

export function encodeThreadCursor(position: Position, seal: CursorSeal): string {
  const text = Buffer.from(JSON.stringify([position.offset, position.key, position.id])).toString('base64url');
  return `${text}.${seal(text)}`;
}

function decodeThreadCursor(cursor: string, argument: string, seal: CursorSeal): Position {
  try {
    const [text = '', signature = ''] = cursor.split('.', 2);
    if (signature !== seal(text)) throw new InputError(`"${argument}" is not a cursor of this list.`, [argument]);
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 3) {
      const [offset, key, id] = value as unknown[];
      if (Number.isSafeInteger(offset) && (offset as number) >= 0 && typeof key === 'string' && typeof id === 'string') {
        return { offset: offset as number, key, id };
      }
    }
  } catch {
    // Not signed here, or not base64url JSON: refused below.
  }
  throw new InputError(`"${argument}" is not a cursor of this list.`, [argument]);
}

interface Group<T> {
  key: string;
  offset: number;
  members: { node: T; rank: Rank }[];
}

/** The window's threads as tie groups in the hub's order (strict by key), each with the hub offset of its first thread. */
function groupsOf<T>(items: readonly T[], start: number, rankOf: (item: T) => Rank): Group<T>[] {
  const groups: Group<T>[] = [];
  items.forEach((node, index) => {
    const rank = rankOf(node);
    const last = groups.at(-1);
    if (last && last.key === rank.key) last.members.push({ node, rank });
    else groups.push({ key: rank.key, offset: start + index, members: [{ node, rank }] });
  });
  return groups;
}

/** The threads of whole groups in the gateway's order, with their positions. */
function ordered<T>(groups: readonly Group<T>[]): { node: T; position: Position }[] {
  return groups.flatMap((group) =>
    [...group.members]
      .sort((a, b) => (a.rank.id < b.rank.id ? -1 : a.rank.id > b.rank.id ? 1 : 0))
      .map((m) => ({ node: m.node, position: { offset: group.offset, ...m.rank } })),
  );
}

/** The list changed so much since the cursor was issued (threads deleted above it) that reading back for it found no end: say so rather than end the list. */
function listMoved(argument: string): InputError {
  return new InputError(`The list changed too much since "${argument}" was issued (threads were deleted above it); start again from the first page.`, [
    argument,
  ]);
}

function tooManyTies(): UpstreamError {
  return new UpstreamError(`Hubzilla has more than ${MAX_WINDOW} threads with one timestamp: they cannot be paged exactly.`, 'UPSTREAM_ERROR', {
    name: 'hubzilla',
    status: 200,
    method: 'GET',
    path: '/api/z/1.0/network/stream',
  });
}

/** The first `first` threads after `after` (or from the start) in the gateway's order. */
export async function threadsAfter<T>(
  fetch: ThreadWindowFetcher<T>,
  rankOf: (item: T) => Rank,
  first: number,
  after: string | null,
  seal: CursorSeal,
): Promise<TiedPage<T>> {
  const from = after === null ? null : decodeThreadCursor(after, 'after', seal);
  let start = from === null ? 0 : Math.max(0, from.offset - SLACK);
  let limit = first + 2 * SLACK;
  let readBack = false;
  for (;;) {
    if (limit > MAX_WINDOW) throw from !== null && start > 0 && readBack ? listMoved('after') : tooManyTies();
    const { items, full } = await fetch(start, limit);
    const groups = groupsOf(items, start, rankOf);
    // A first group that may begin before the window and may hold threads after the cursor, or no thread at all where
    // threads deleted above the cursor moved the rest up past the window: read from further back.
    const head = groups[0];
    if (start > 0 && from !== null && (head === undefined || head.key <= from.key)) {
      readBack = true;
      start = Math.max(0, start - limit);
      limit *= 2;
      continue;
    }
    const whole = full ? groups.slice(0, -1) : groups;
    const candidates = ordered(whole).filter((c) => from === null || precedes(from, c.position));
    if (candidates.length >= first || !full) {
      const page = candidates.slice(0, first);
      return {
        items: page.map((c) => ({ node: c.node, cursor: encodeThreadCursor(c.position, seal) })),
        hasNextPage: candidates.length > first || full,
        hasPreviousPage: from !== null || start > 0,
      };
    }
    limit *= 2;
  }
}

/** The last `last` threads before `before` in the gateway's order. */
export async function threadsBefore<T>(
  fetch: ThreadWindowFetcher<T>,
  rankOf: (item: T) => Rank,
  last: number,
  before: string,
  seal: CursorSeal,
): Promise<TiedPage<T>> {
  const to = decodeThreadCursor(before, 'before', seal);
  let start = Math.max(0, to.offset - last - SLACK);
  let end = to.offset + last + SLACK;
  for (;;) {
    if (end - start > MAX_WINDOW) throw tooManyTies();
    const { items, full } = await fetch(start, end - start);
    const groups = groupsOf(items, start, rankOf);
    // The cursor's own group must end inside the window: read further on while the window may have cut it.
    const tail = groups.at(-1);
    if (full && tail !== undefined && tail.key >= to.key) {
      end += end - start;
      continue;
    }
    const whole = start > 0 ? groups.slice(1) : groups;
    const candidates = ordered(whole).filter((c) => precedes(c.position, to));
    if (candidates.length >= last || start === 0) {
      const page = candidates.slice(-last);
      return {
        items: page.map((c) => ({ node: c.node, cursor: encodeThreadCursor(c.position, seal) })),
        hasNextPage: true,
        hasPreviousPage: candidates.length > last || start > 0,
      };
    }
    start = Math.max(0, start - (end - start));
  }
}
