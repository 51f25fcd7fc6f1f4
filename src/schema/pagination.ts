/** Turns an upstream window into the Relay connection shape Pothos serves. */
import {
  encodeCursor,
  fetchKeysetWindow,
  fetchSlice,
  fetchWindow,
  type KeyPageFetcher,
  type PageFetcher,
  type SliceFetcher,
  type Window,
  type WindowArgs,
} from '../upstreams/pagination.js';

/** An edge whose cursor is encoded only when a query selects it: lists of thousands rarely do. */
class Edge<T> {
  constructor(
    readonly node: T,
    private readonly offset: number,
    private readonly key: number | null,
  ) {}

  get cursor(): string {
    return encodeCursor(this.offset, this.key);
  }
}

export interface ConnectionResult<T> {
  edges: { readonly cursor: string; readonly node: T }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  totalCount: number | null;
}

/** Fetches the window `args` asks for with the fewest upstream page calls. */
export async function resolveConnection<T>(args: WindowArgs, defaultPageSize: number, fetchPage: PageFetcher<T>): Promise<ConnectionResult<T>> {
  return toConnection(await fetchWindow(args, defaultPageSize, fetchPage));
}

/** Fetches exactly the window `args` asks for, in one call: for upstreams that re-sort each page (fetchSlice). */
export async function resolveSliceConnection<T>(args: WindowArgs, defaultPageSize: number, fetchItems: SliceFetcher<T>): Promise<ConnectionResult<T>> {
  return toConnection(await fetchSlice(args, defaultPageSize, fetchItems));
}

/**
 * Fetches the window `args` asks for from a list that GitLab also serves by
 * keyset in this order: each cursor holds its item's key (`keyOf`), and a
 * forward page after one is a single keyset call at any depth.
 */
export async function resolveKeysetConnection<T>(
  args: WindowArgs,
  defaultPageSize: number,
  keyOf: (item: T) => number,
  fetchAfter: KeyPageFetcher<T>,
  fetchPage: PageFetcher<T>,
): Promise<ConnectionResult<T>> {
  return toConnection(await fetchKeysetWindow(args, defaultPageSize, fetchAfter, fetchPage), keyOf);
}

function toConnection<T>(window: Window<T>, keyOf?: (item: T) => number): ConnectionResult<T> {
  const edges = window.items.map((node, i) => new Edge(node, window.start + i, keyOf ? safeKey(keyOf(node)) : null));
  return {
    edges,
    pageInfo: {
      hasNextPage: window.hasNextPage,
      hasPreviousPage: window.hasPreviousPage,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
    totalCount: window.total,
  };
}

/** A key a cursor can hold: an item without a sane id gets an offset-only cursor. */
function safeKey(key: unknown): number | null {
  return typeof key === 'number' && Number.isSafeInteger(key) && key >= 0 ? key : null;
}
