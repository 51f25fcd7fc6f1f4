/**
 * Reading conversation items: channel/stream (`zot_feed()`), network/stream
 * (`items_fetch()`), item/full and item/export_page (reference §1.5).
 */
import { encodeItem } from './activity.js';
import type { ApiContext } from './context.js';
import { NULL_DATE, addSeconds, formatDate, parseUserDate } from './dates.js';
import { TERM_CATEGORY, TERM_FILE, TERM_HASHTAG, type ItemRow } from './records.js';
import { CRASH, EMPTY_JSON, json, type ApiResult } from './reply.js';
import { flagParam, intParam, param } from './request-params.js';
import { createActivityItem } from './item-update.js';
import type { Store } from './store.js';

/** `item_normal()`: what the streams show (no hidden photo items, deleted or blocked ones). */
export function isNormal(i: ItemRow): boolean {
  return (
    i.item_hidden === 0 &&
    i.item_type === 0 &&
    i.item_deleted === 0 &&
    i.item_unpublished === 0 &&
    i.item_delayed === 0 &&
    i.item_pending_remove === 0 &&
    i.item_blocked === 0
  );
}

function byCreated(a: ItemRow, b: ItemRow): number {
  return a.created < b.created ? -1 : a.created > b.created ? 1 : a.id - b.id;
}

/** A thread flattened as `conv_sort()` leaves it: the parent, then its items by creation. */
function flattenThreads(parents: readonly ItemRow[], children: readonly ItemRow[]): ItemRow[] {
  const byParent = new Map<number, ItemRow[]>();
  for (const c of children) {
    if (c.id === c.parent) continue;
    const list = byParent.get(c.parent) ?? [];
    list.push(c);
    byParent.set(c.parent, list);
  }
  const out: ItemRow[] = [];
  for (const p of parents) {
    out.push(p);
    out.push(...(byParent.get(p.id) ?? []).sort(byCreated));
  }
  return out;
}

/** Seconds in the default channel/stream window: `zot_feed()` uses now - 14 days. */
const FOURTEEN_DAYS = 14 * 24 * 3600;
/** At most this many threads survive `zot_feed()`'s collapse. */
const FEED_THREAD_LIMIT = 201;

/**
 * channel/stream. GET: the channel's own wall items created or changed after
 * `mindate` (default now - 14 days; no other parameter, no pagination), whole
 * threads, ascending. Any other method posts (`post_activity_item()`).
 */
export function channelStream(ctx: ApiContext): ApiResult {
  if (ctx.method !== 'GET') return createActivityItem(ctx);
  const { store, channel } = ctx;
  const given = param(ctx.params, 'mindate');
  const parsed = given === undefined ? null : parseUserDate(given);
  const mindate = parsed ? formatDate(parsed) : addSeconds(store.clock.now(), -FOURTEEN_DAYS);
  const rows = store.items
    .filter((i) => i.uid === channel.channel_id && i.item_wall === 1 && isNormal(i) && (i.created > mindate || i.changed > mindate))
    .sort(byCreated)
    .slice(0, 5000);
  const threadIds: number[] = [];
  for (const r of rows) if (!threadIds.includes(r.parent)) threadIds.push(r.parent);
  const kept = new Set(threadIds.slice(0, FEED_THREAD_LIMIT));
  const all = store.items.filter((i) => i.uid === channel.channel_id && kept.has(i.parent) && isNormal(i));
  const parents = all.filter((i) => i.id === i.parent).sort(byCreated);
  return json(flattenThreads(parents, all).map((i) => encodeItem(store, i, false)));
}

function matchesSearch(store: Store, item: ItemRow, search: string): boolean {
  if (search.startsWith('#')) {
    const tag = search.slice(1).toLowerCase();
    return store.termsOf(item).some((t) => t.ttype === TERM_HASHTAG && t.term.toLowerCase() === tag);
  }
  const needle = search.toLowerCase();
  return item.body.toLowerCase().includes(needle) || item.title.toLowerCase().includes(needle);
}

/** Page size of network/stream: pconfig system.itemspage, default 10 threads. */
function itemsPage(store: Store, uid: number): number {
  const v = Number.parseInt(store.pconfigValue(uid, 'system', 'itemspage') ?? '', 10);
  return Number.isNaN(v) || v <= 0 ? 10 : v;
}

/**
 * network/stream. Threads of everything the channel received, newest activity
 * first, a page of threads (not rows) at a time, each with all its comments.
 * Quirks kept: POST answers an empty body typed JSON; any `gid` and an unknown
 * `cid` crash with a 500 (reference §1.4); `since_id` and `search` also drop
 * non-matching comments; there is no `max_id`.
 */
/** Where a tied row lands in a page asked with this start and records: fixed for one page, another for the next. */
function tieRank(id: number, start: number, records: number): number {
  let h = Math.imul(id ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(start + 1, 0xc2b2ae35) ^ Math.imul(records + 7, 0x27d4eb2f);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return (h ^ (h >>> 12)) >>> 0;
}

export function networkStream(ctx: ApiContext): ApiResult {
  if (ctx.method !== 'GET') return EMPTY_JSON;
  const { store, channel, params } = ctx;
  const uid = channel.channel_id;
  // items_fetch() looks up $arr['group'] for gid and encodes its failure array as an item.
  if (params.values.has('gid')) return CRASH;
  let cidXchan: string | undefined;
  const cid = intParam(params, 'cid');
  if (cid) {
    const abook = store.abooks.find((a) => a.abook_id === cid && a.abook_channel === uid);
    if (!abook) return CRASH;
    cidXchan = abook.abook_xchan;
  }
  const allTypes = param(params, 'item_type') === '*' || flagParam(params, 'pages');
  const visible = (i: ItemRow): boolean => i.uid === uid && (allTypes ? i.item_deleted === 0 : isNormal(i));

  const search = param(params, 'search') ?? '';
  const sinceId = intParam(params, 'since_id');
  const dbegin = parseUserDate(param(params, 'dbegin') ?? '');
  const dend = parseUserDate(param(params, 'dend') ?? '');
  // Conditions items_fetch() puts in $sql_extra: they apply to comments too.
  const rowFilter = (i: ItemRow): boolean =>
    (search === '' || matchesSearch(store, i, search)) &&
    (sinceId === 0 || i.id > sinceId) &&
    (!dbegin || i.created >= formatDate(dbegin)) &&
    (!dend || i.created <= formatDate(dend));

  const star = flagParam(params, 'star');
  const wall = flagParam(params, 'wall');
  const itemId = intParam(params, 'item_id');
  const mid = param(params, 'mid');
  const cat = param(params, 'cat');
  const file = param(params, 'file');
  const conv = flagParam(params, 'conv');
  const cmin = params.values.has('cmin') ? intParam(params, 'cmin') : undefined;
  const cmax = params.values.has('cmax') ? intParam(params, 'cmax') : undefined;
  const self = channel.channel_hash;
  const closeness = (hash: string): number => store.abooks.find((a) => a.abook_channel === uid && a.abook_xchan === hash)?.abook_closeness ?? 0;
  const hasTerm = (i: ItemRow, ttype: number, term: string): boolean =>
    store.termsOf(i).some((t) => t.ttype === ttype && t.term.toLowerCase() === term.toLowerCase());

  let parents = store.items.filter(
    (i) =>
      visible(i) &&
      i.id === i.parent &&
      rowFilter(i) &&
      (!star || i.item_starred === 1) &&
      (!wall || i.item_wall === 1) &&
      (!itemId || i.id === itemId) &&
      (mid === undefined || mid === '' || i.mid === mid) &&
      (cat === undefined || cat === '' || hasTerm(i, TERM_CATEGORY, cat)) &&
      (file === undefined || file === '' || hasTerm(i, TERM_FILE, file)) &&
      (!cidXchan || i.owner_xchan === cidXchan || i.author_xchan === cidXchan) &&
      (cmin === undefined || closeness(i.owner_xchan) >= cmin) &&
      (cmax === undefined || closeness(i.owner_xchan) <= cmax) &&
      (!conv || store.items.some((c) => c.uid === uid && c.parent === i.id && (c.author_xchan === self || c.item_mentionsme === 1))),
  );
  const orderKey: 'created' | 'commented' = param(params, 'order') === 'post' ? 'created' : 'commented';
  const start = intParam(params, 'start');
  const records = intParam(params, 'records');
  // ORDER BY <key> DESC LIMIT/OFFSET with nothing to break ties: MariaDB orders a tie as its plan for that
  // LIMIT and OFFSET goes, so the same tied threads come in another order on each page (as on a real hub).
  const tie = (id: number): number => tieRank(id, start, records);
  parents.sort((a, b) => (a[orderKey] < b[orderKey] ? 1 : a[orderKey] > b[orderKey] ? -1 : tie(a.id) - tie(b.id)));

  if (records > 0) {
    parents = parents.slice(Math.max(0, start), Math.max(0, start) + records);
  } else {
    const size = itemsPage(store, uid);
    const page = Math.max(1, intParam(params, 'page') || 1);
    parents = parents.slice((page - 1) * size, page * size);
  }
  // The hub picks the page in SQL (ties in the one-second `commented` broken one way), then conv_sort()
  // re-sorts it in PHP, breaking ties another way: a page of a larger window is not the window's order.
  parents.sort((a, b) => (a[orderKey] < b[orderKey] ? 1 : a[orderKey] > b[orderKey] ? -1 : a.id - b.id));
  if (flagParam(params, 'top')) return json(parents.map((i) => encodeItem(store, i, false)));
  const ids = new Set(parents.map((p) => p.id));
  const children = store.items.filter((i) => visible(i) && ids.has(i.parent) && i.id !== i.parent && rowFilter(i));
  return json(flattenThreads(parents, children).map((i) => encodeItem(store, i, false)));
}

/**
 * item/full: the whole thread, parent first, in mirror encoding. `mid` matches
 * the thread's top mid, `item_id` the thread parent id: a comment's id finds
 * nothing (item_full_comment_id_returns_empty.txt). Missing or unknown -> `[]`.
 */
export function itemFull(ctx: ApiContext): ApiResult {
  const { store, channel, params } = ctx;
  const mid = param(params, 'mid');
  const itemId = intParam(params, 'item_id');
  let thread: ItemRow[] = [];
  if (mid) thread = store.items.filter((i) => i.uid === channel.channel_id && i.parent_mid === mid && i.item_deleted === 0);
  else if (itemId) thread = store.items.filter((i) => i.uid === channel.channel_id && i.parent === itemId && i.item_deleted === 0);
  const parents = thread.filter((i) => i.id === i.parent);
  if (parents.length === 0) return json([]);
  return json({ item: flattenThreads(parents, thread).map((i) => encodeItem(store, i, true)) });
}

/** The channel's wall posts in export order (created ascending), optionally within a date range. */
export function wallItems(store: Store, uid: number, since: string, until: string): ItemRow[] {
  return store.items.filter((i) => i.uid === uid && i.item_wall === 1 && i.item_deleted === 0 && i.created >= since && i.created <= until).sort(byCreated);
}

/**
 * item/export_page (not in the spec): `{relocate, items_total, items_page, item[]}`,
 * `page` 0-based, `records` default 10, optional `since`/`until`.
 */
export function itemExportPage(ctx: ApiContext): ApiResult {
  const { store, channel, params } = ctx;
  const since = parseUserDate(param(params, 'since') ?? '');
  const until = parseUserDate(param(params, 'until') ?? '');
  const all = wallItems(store, channel.channel_id, since ? formatDate(since) : NULL_DATE, until ? formatDate(until) : store.clock.now());
  const records = intParam(params, 'records') || 10;
  const page = Math.max(0, intParam(params, 'page'));
  const slice = all.slice(page * records, page * records + records);
  return json({
    relocate: { channel_address: channel.channel_address, url: store.base },
    items_total: all.length,
    items_page: slice.length,
    item: slice.map((i) => encodeItem(store, i, true)),
  });
}
