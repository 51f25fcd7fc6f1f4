/**
 * GitLab's keyset pagination and its offset limit
 * (lib/api/helpers/pagination_strategies.rb):
 * - `pagination=keyset` on project lists (Gitlab::Pagination::Keyset: id order
 *   only; the next page's Link adds `id_after`/`id_before` after every page
 *   that is not empty) and on project jobs (CursorBasedKeyset: id desc only;
 *   an opaque `cursor`, linked only while more follow);
 * - offset pages of those types past `offset_pagination_limit` answer 405.
 */
import type { JsonResponse } from '../http-util.js';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE, type PageRequest } from './pagination.js';
import type { Params } from './params.js';

/** GitLab's default plan limit `offset_pagination_limit` (gitlab.com's too). */
export const OFFSET_PAGINATION_LIMIT = 50_000;

const KEYSET_UNAVAILABLE: JsonResponse = { status: 405, body: { error: 'Keyset pagination is not yet available for this type of request' } };

/** Whether the request asks for keyset pagination (`params[:pagination] == 'keyset'`). */
function wantsKeyset(params: Params): boolean {
  return params.string('pagination') === 'keyset';
}

/** The 405 of an offset page beyond the limit (`page * per_page > limit`), or null. */
function offsetLimitFailure(page: PageRequest, type: 'Project' | 'Ci::Build', limit = OFFSET_PAGINATION_LIMIT): JsonResponse | null {
  if (limit <= 0 || page.page * page.perPage <= limit) return null;
  const error =
    `Offset pagination has a maximum allowed offset of ${limit} for requests that return objects of type ${type}. ` +
    'Remaining records can be retrieved using keyset pagination.';
  return { status: 405, body: { error } };
}

/** Keyset::Page#per_page: the default for 0 or less, at most 100. */
function keysetPerPage(params: Params): number {
  const perPage = params.integer('per_page') ?? DEFAULT_PER_PAGE;
  return perPage <= 0 ? DEFAULT_PER_PAGE : Math.min(perPage, MAX_PER_PAGE);
}

function linkTo(url: string, query: Record<string, string[]>, changes: Record<string, string>): string {
  const params: Record<string, string[]> = { ...query };
  for (const [key, value] of Object.entries(changes)) params[key] = [value];
  const search = new URLSearchParams();
  for (const key of Object.keys(params).sort()) for (const value of params[key] ?? []) search.append(key, value);
  return `<${url}?${search.toString()}>; rel="next"`;
}

/**
 * A keyset page of projects already filtered and ordered by the request's
 * filters (id_after/id_before included): 405 unless ordered by id; the first
 * `per_page`, and a Link to the page after the last one sent.
 */
export function projectKeysetPage<T extends { id: number }>(
  selected: readonly T[],
  params: Params,
  link: { url: string; query: Record<string, string[]> },
): { items: T[]; headers: Record<string, string> } | JsonResponse {
  if ((params.string('order_by') ?? 'created_at') !== 'id') return KEYSET_UNAVAILABLE;
  const items = selected.slice(0, keysetPerPage(params));
  const last = items[items.length - 1];
  const headers: Record<string, string> = {};
  if (last) headers.Link = linkTo(link.url, link.query, { [params.string('sort') === 'asc' ? 'id_after' : 'id_before']: String(last.id) });
  return { items, headers };
}

/** Keyset::Paginator's cursor: URL-safe Base64 (padding optional) of a JSON object of strings. */
function parseCursor(cursor: string): { id: number | null; backward: boolean } | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof value !== 'object' || value === null) return null;
    const { id, _kd: direction } = value as Record<string, unknown>;
    const key = id === undefined ? null : Number(id);
    if (key !== null && !Number.isSafeInteger(key)) return null;
    return { id: key, backward: direction === 'p' };
  } catch {
    return null;
  }
}

function dumpCursor(id: number, direction: 'n' | 'p'): string {
  return Buffer.from(JSON.stringify({ id: String(id), _kd: direction }))
    .toString('base64')
    .replace(/\+/g, '-')
    .replace(/\//g, '_');
}

/**
 * A keyset page of jobs, `newestFirst` already in id desc order: 405 unless
 * the order asked is id desc; the `per_page` jobs after (or, `_kd: p`,
 * before) the cursor's id, and a Link with the next cursor while more follow.
 */
export function jobKeysetPage<T extends { id: number }>(
  newestFirst: readonly T[],
  params: Params,
  link: { url: string; query: Record<string, string[]> },
): { items: T[]; headers: Record<string, string> } | JsonResponse {
  if ((params.string('order_by') ?? 'id') !== 'id' || (params.string('sort') ?? 'desc') !== 'desc') return KEYSET_UNAVAILABLE;
  const raw = params.string('cursor');
  const cursor = raw === undefined || raw === '' ? { id: null, backward: false } : parseCursor(raw);
  // An unreadable cursor raises in Gitlab::Json.safe_parse, which Grape answers as a server error.
  if (!cursor) return { status: 500, body: { message: '500 Internal Server Error' } };
  const perPage = keysetPerPage(params);
  let candidates: readonly T[] = newestFirst;
  if (cursor.id !== null) {
    const key = cursor.id;
    candidates = cursor.backward ? newestFirst.filter((job) => job.id > key).reverse() : newestFirst.filter((job) => job.id < key);
  } else if (cursor.backward) {
    candidates = [...newestFirst].reverse();
  }
  const taken = candidates.slice(0, perPage + 1);
  const more = taken.length > perPage;
  const items = taken.slice(0, perPage);
  if (cursor.backward) items.reverse();
  const headers: Record<string, string> = {};
  // Going forward a next page exists while more follow; going backward there is always one (Paginator#has_next_page?).
  const last = items[items.length - 1];
  if (last && (cursor.backward ? cursor.id !== null : more)) headers.Link = linkTo(link.url, link.query, { cursor: dumpCursor(last.id, 'n') });
  return { items, headers };
}

/**
 * The page a list request asks for (pagination_strategies.rb's paginator):
 * by keyset with `pagination=keyset`, else by offset unless it lies past the
 * limit for `type`. Either way a JsonResponse is a refusal to send as it is.
 */
export function pageOf<T>(
  params: Params,
  request: PageRequest,
  type: 'Project' | 'Ci::Build',
  byKeyset: () => { items: T[]; headers: Record<string, string> } | JsonResponse,
  byOffset: () => { items: T[]; headers: Record<string, string> },
): { items: T[]; headers: Record<string, string> } | JsonResponse {
  if (wantsKeyset(params)) return byKeyset();
  return offsetLimitFailure(request, type) ?? byOffset();
}
