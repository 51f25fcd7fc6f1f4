/** Turns an upstream window into the Relay connection shape Pothos serves. */
import { encodeCursor, fetchSlice, fetchWindow, type PageFetcher, type SliceFetcher, type Window, type WindowArgs } from '../upstreams/pagination.js';

/** An edge whose cursor is encoded only when a query selects it: lists of thousands rarely do. */
class Edge<T> {
  constructor(
    readonly node: T,
    private readonly offset: number,
  ) {}

  get cursor(): string {
    return encodeCursor(this.offset);
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

function toConnection<T>(window: Window<T>): ConnectionResult<T> {
  const edges = window.items.map((node, i) => new Edge(node, window.start + i));
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
