/**
 * Item encodings. The streams, item/full and photo do not return item rows but
 * Zot "activity" objects built by `encode_item()` (reference §1.5,
 * channel/stream): `message_id`, `owner{}`, `author{}`, `flags[]` and optional
 * keys present only when non-empty. item/update returns the raw row instead.
 */
import { NULL_DATE, ZERO_DATE } from './dates.js';
import type { ItemRow, TermRow, XchanRow } from './records.js';
import type { Store } from './store.js';

/** The item_* flag columns `encode_item($item, true)` mirrors, in emitted order. */
const MIRRORED_FLAGS = [
  'item_origin',
  'item_unseen',
  'item_starred',
  'item_uplink',
  'item_consensus',
  'item_wall',
  'item_thread_top',
  'item_notshown',
  'item_nsfw',
  'item_relay',
  'item_mentionsme',
  'item_nocomment',
  'item_obscured',
  'item_verified',
  'item_retained',
  'item_rss',
  'item_deleted',
  'item_type',
  'item_hidden',
  'item_unpublished',
  'item_delayed',
  'item_pending_remove',
  'item_blocked',
] as const satisfies readonly (keyof ItemRow)[];

/** `termtype()` names used in activity `tags`. */
const TERM_TYPE_NAMES: Record<number, string> = {
  1: 'hashtag',
  2: 'mention',
  3: 'category',
  4: 'private_category',
  5: 'file',
  6: 'search',
  7: 'thing',
  8: 'bookmark',
  9: 'hierarchy',
  10: 'communitytag',
  11: 'forum',
};

function decodeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** `encode_item_xchan()`: the owner/author block. */
function encodeXchan(x: XchanRow | undefined): Record<string, unknown> {
  return {
    name: x?.xchan_name ?? '',
    address: x?.xchan_addr ?? '',
    url: x?.xchan_url ?? '',
    network: x?.xchan_network ?? '',
    photo: { mimetype: x?.xchan_photo_mimetype ?? '', src: x?.xchan_photo_m ?? '' },
    id: x?.xchan_guid ?? '',
    id_sig: x?.xchan_guid_sig ?? '',
    key: x?.xchan_pubkey ?? '',
  };
}

/** `flags[]` in the real order; absent (not empty) when none apply, e.g. on plain comments. */
function itemFlags(item: ItemRow): string[] {
  const flags: string[] = [];
  if (item.item_deleted) flags.push('deleted');
  if (item.item_hidden) flags.push('hidden');
  if (item.item_notshown) flags.push('notshown');
  if (item.item_thread_top) flags.push('thread_parent');
  if (item.item_nsfw) flags.push('nsfw');
  if (item.item_consensus) flags.push('consensus');
  if (item.item_obscured) flags.push('obscured');
  if (item.item_private) flags.push('private');
  if (item.item_private === 2) flags.push('direct');
  return flags;
}

function encodeTags(terms: readonly TermRow[]): { tag: string; url: string; type: string }[] {
  return terms.map((t) => ({ tag: t.term, url: t.url, type: TERM_TYPE_NAMES[t.ttype] ?? 'unknown' }));
}

/**
 * `encode_item($item, $mirror)`. With `mirror` (item/full, photo, exports) the
 * row's id, ACL and item_* flags come first, and `attach` is the raw string ''
 * when empty but a decoded array when present (reference §1.5, item/full).
 */
export function encodeItem(store: Store, item: ItemRow, mirror: boolean): Record<string, unknown> {
  const x: Record<string, unknown> = { type: 'activity', encoding: 'zot' };
  if (mirror) {
    x.id = item.id;
    x.parent = item.parent;
    x.uid = item.uid;
    x.allow_cid = item.allow_cid;
    x.allow_gid = item.allow_gid;
    x.deny_cid = item.deny_cid;
    x.deny_gid = item.deny_gid;
    x.revision = item.revision;
    x.layout_mid = item.layout_mid;
    x.postopts = item.postopts;
    x.resource_id = item.resource_id;
    x.resource_type = item.resource_type;
    x.attach = item.attach === '' ? '' : decodeJson(item.attach);
    for (const flag of MIRRORED_FLAGS) x[flag] = item[flag];
  }
  x.uuid = item.uuid;
  x.message_id = item.mid;
  x.message_top = item.parent_mid;
  x.message_parent = item.thr_parent;
  x.created = item.created;
  x.edited = item.edited;
  x.expires = item.expires === NULL_DATE ? ZERO_DATE : item.expires;
  x.commented = item.commented;
  x.mimetype = item.mimetype;
  x.title = item.title;
  x.summary = item.summary;
  x.body = item.body;
  x.app = item.app;
  x.verb = item.verb;
  x.object_type = item.obj_type;
  x.target_type = item.tgt_type;
  x.permalink = item.plink;
  x.location = item.location;
  x.longlat = item.coord;
  x.signature = item.sig;
  x.route = item.route;
  x.owner = encodeXchan(store.xchan(item.owner_xchan));
  x.author = encodeXchan(store.xchan(item.author_xchan));
  if (item.obj !== '') x.object = decodeJson(item.obj);
  if (item.target !== '') x.target = decodeJson(item.target);
  if (item.attach !== '') x.attach = decodeJson(item.attach);
  const flags = itemFlags(item);
  if (flags.length > 0) x.flags = flags;
  if (item.comments_closed !== NULL_DATE) x.comments_closed = item.comments_closed;
  x.public_scope = item.public_policy;
  x.comment_scope = item.comment_policy;
  const terms = store.termsOf(item);
  if (terms.length > 0) x.tags = encodeTags(terms);
  return x;
}

/**
 * The raw item row as `item_store()` returns it after insert, plus `term`
 * (`{uid,ttype,otype,term,url}`) when tags or categories exist or `withTerm` is
 * set (item_store_update() always adds it, even empty: item_update_edit.txt).
 */
export function rawItem(store: Store, item: ItemRow, withTerm: boolean): Record<string, unknown> {
  const row: Record<string, unknown> = { ...item };
  const terms = store.termsOf(item);
  if (terms.length > 0 || withTerm) {
    row.term = terms.map((t) => ({ uid: t.uid, ttype: t.ttype, otype: t.otype, term: t.term, url: t.url }));
  }
  return row;
}
