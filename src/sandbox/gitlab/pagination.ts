/**
 * GitLab's offset pagination (Kaminari behind lib/gitlab/pagination/offset_pagination.rb):
 * `page` and `per_page` in, the page's items plus Link and X-* headers out.
 */

/** Per-page default and cap of GitLab's offset pagination. */
export const DEFAULT_PER_PAGE = 20;
export const MAX_PER_PAGE = 100;
/** Above this many items GitLab stops counting (Kaminari MAX_COUNT_LIMIT). */
export const COUNT_LIMIT = 10_000;

export interface PageRequest {
  page: number;
  perPage: number;
}

export interface Page<T> {
  items: T[];
  headers: Record<string, string>;
}

/**
 * Slices `all` to the requested page and builds GitLab's pagination headers.
 * Link URLs are `baseUrl + rawPath` with the request's query parameters,
 * sorted by key as Rails' `to_query` does, and `page`/`per_page` replaced.
 * `withoutCount` drops X-Total, X-Total-Pages and rel="last" as Kaminari's
 * `without_count` does.
 */
export function paginate<T>(
  all: readonly T[],
  request: PageRequest,
  linkBase: { url: string; query: Record<string, string[]> },
  options: { withoutCount?: boolean } = {},
): Page<T> {
  const { page, perPage } = request;
  const start = (page - 1) * perPage;
  const items = all.slice(start, start + perPage);
  // Endpoints that paginate `without_count` (GET /projects/:id/jobs) never count, at any size.
  const counted = !options.withoutCount && all.length <= COUNT_LIMIT;
  const headers: Record<string, string> = { 'X-Page': String(page), 'X-Per-Page': String(perPage) };
  let prev: number | null;
  let next: number | null;
  let totalPages = 0;
  if (counted) {
    // Kaminari: total_pages is at least 1; past the last page there is neither prev nor next.
    totalPages = Math.max(Math.ceil(all.length / perPage), 1);
    const outOfRange = page > totalPages;
    prev = page > 1 && !outOfRange ? page - 1 : null;
    next = page < totalPages ? page + 1 : null;
    headers['X-Total'] = String(all.length);
    headers['X-Total-Pages'] = String(totalPages);
  } else {
    // X-Total, X-Total-Pages and rel="last" are omitted above 10,000 items; next is known by peeking one item ahead.
    prev = page > 1 && items.length > 0 ? page - 1 : null;
    next = all.length > start + perPage ? page + 1 : null;
  }
  // X-Next-Page / X-Prev-Page are the to_s of a nil page: present but empty.
  headers['X-Next-Page'] = next === null ? '' : String(next);
  headers['X-Prev-Page'] = prev === null ? '' : String(prev);
  const href = (p: number): string => pageUrl(linkBase.url, linkBase.query, p, perPage);
  const links: string[] = [];
  if (prev !== null) links.push(`<${href(prev)}>; rel="prev"`);
  if (next !== null) links.push(`<${href(next)}>; rel="next"`);
  links.push(`<${href(1)}>; rel="first"`);
  if (counted) links.push(`<${href(totalPages)}>; rel="last"`);
  headers.Link = links.join(', ');
  return { items, headers };
}

function pageUrl(url: string, query: Record<string, string[]>, page: number, perPage: number): string {
  const params: Record<string, string[]> = { ...query, page: [String(page)], per_page: [String(perPage)] };
  const search = new URLSearchParams();
  for (const key of Object.keys(params).sort()) for (const value of params[key] ?? []) search.append(key, value);
  return `${url}?${search.toString()}`;
}
