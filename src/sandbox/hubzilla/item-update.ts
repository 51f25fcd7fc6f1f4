/**
 * Posting: item/update (`zot_item_update()` -> `Item::post()` with
 * api_source=1) and the POST branch of channel/stream
 * (`post_activity_item()`). Reads PHP form fields only, under the real names:
 * `source` (not `app`), `permalink` (not `plink`), `contact_allow[]` etc., and
 * `media` as a multipart upload (reference §1.5, item/update).
 */
import { rawItem } from './activity.js';
import type { ApiContext } from './context.js';
import { NULL_DATE, addSeconds, formatDate, parseUserDate } from './dates.js';
import { deliverLocally } from './delivery.js';
import { ensureFolder, storeFile } from './files.js';
import { signature, uuidFor } from './identifiers.js';
import { imageSize } from './images.js';
import { isImageType, storePhoto } from './photos.js';
import { TERM_CATEGORY, TERM_HASHTAG, type ChannelRow, type ItemRow } from './records.js';
import { EMPTY_HTML, json, phpJsonEncode, type ApiResult } from './reply.js';
import { flagParam, intParam, param, paramList, type RequestParams, type UploadedFile } from './request-params.js';
import type { Store } from './store.js';
import { needsAddItem, storeAddItem } from './add-items.js';
import { defaultVocabulary, mediaFirst, storesAddItems } from './versions.js';

const GUESSED_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  txt: 'text/plain',
  md: 'text/markdown',
  pdf: 'application/pdf',
  json: 'application/json',
};

function mediaType(file: UploadedFile): string {
  if (file.type !== '' && file.type !== 'application/octet-stream') return file.type;
  const ext = file.name.split('.').pop()?.toLowerCase() ?? '';
  return GUESSED_TYPES[ext] ?? (file.type || 'application/octet-stream');
}

interface StoredMedia {
  /** Text `zot_item_update()` appends to `body` ("\n\n" + Wall_attach's body); 10.x puts the link first instead (mediaFirst). */
  bodySuffix: string;
  /** `item.attach` entries for non-image files. */
  attach: { href: string; length: number; type: string; title: string; revision: number }[];
}

/**
 * `Wall_attach::post()`: files go into the `%Y-%m` folder. An image becomes a
 * photo and appends `[zrl=…][zmg=…]name[/zmg][/zrl]` to the body; any other
 * file becomes an `item.attach` entry and leaves the body alone
 * (item_update_media.txt, item_update_media_text.txt).
 */
function storeMedia(store: Store, channel: ChannelRow, file: UploadedFile): StoredMedia {
  const created = store.clock.tick();
  const folderName = created.slice(0, 7);
  const type = mediaType(file);
  const size = isImageType(type) ? imageSize(file.data) : null;
  if (size) {
    const { attach } = storePhoto(store, channel, {
      album: folderName,
      filename: file.name,
      mimetype: type,
      data: file.data,
      width: size.width,
      height: size.height,
      created,
    });
    const ext = type === 'image/jpeg' ? 'jpg' : (type.split('/')[1] ?? 'jpg');
    const nick = channel.channel_address;
    return {
      bodySuffix: `\n\n\n\n[zrl=${store.base}/photos/${nick}/image/${attach.hash}][zmg=${store.base}/photo/${attach.hash}-2.${ext}]${file.name}[/zmg][/zrl]`,
      attach: [],
    };
  }
  const folder = ensureFolder(store, channel, folderName, created);
  const row = storeFile(store, channel, folder, { filename: file.name, filetype: type, data: file.data, created });
  return {
    bodySuffix: '',
    attach: [{ href: `${store.base}/attach/${row.hash}`, length: row.filesize, type: row.filetype, title: phpUrlencode(row.filename), revision: 0 }],
  };
}

/** `perms2str()`: `<a><b>` from a list (or a comma-separated string). */
function aclString(params: RequestParams, key: string): string | undefined {
  const list = paramList(params, key);
  return list === undefined ? undefined : list.map((v) => `<${v}>`).join('');
}

/** `linkify_tags()` for hashtags: `#word` -> `#[zrl=<base>/search?tag=word]word[/zrl]`. */
function linkifyHashtags(store: Store, body: string): { body: string; tags: string[] } {
  const tags: string[] = [];
  const out = body.replace(/(^|[\s(])#([\p{L}\p{N}_-]+)/gu, (_m, pre: string, tag: string) => {
    if (!tags.includes(tag)) tags.push(tag);
    return `${pre}#[zrl=${store.base}/search?tag=${encodeURIComponent(tag)}]${tag}[/zrl]`;
  });
  return { body: out, tags };
}

function addTerms(store: Store, channel: ChannelRow, item: ItemRow, categories: readonly string[], hashtags: readonly string[]): void {
  for (const tag of hashtags) store.addTerm(item, TERM_HASHTAG, tag, `${store.base}/search?tag=${encodeURIComponent(tag)}`);
  for (const cat of categories) {
    store.addTerm(item, TERM_CATEGORY, cat, `${store.base}/channel/${channel.channel_address}?f=&cat=${encodeURIComponent(cat)}`);
  }
}

function categoriesOf(params: RequestParams): string[] {
  return (param(params, 'category') ?? '')
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
}

function dateParam(params: RequestParams, key: string): string | undefined {
  const v = param(params, key);
  if (v === undefined || v.trim() === '') return undefined;
  const d = parseUserDate(v);
  return d ? formatDate(d) : NULL_DATE;
}

/** Edits `item` in place from the form (`post_id`, or a known `namespace`+`remote_id`). */
function editItem(ctx: ApiContext, item: ItemRow, body: string, attach: StoredMedia['attach']): ApiResult {
  const { store, channel, params } = ctx;
  const { body: linked, tags } = linkifyHashtags(store, body);
  item.body = linked;
  item.title = param(params, 'title') ?? '';
  item.summary = param(params, 'summary') ?? '';
  item.mimetype = param(params, 'mimetype') || 'text/bbcode';
  // Item::post() takes obj_type from the form as for a new post: an edit that sends none makes a comment a note (measured on 8.8.7).
  item.obj_type = param(params, 'obj_type') || defaultVocabulary(store.version, false).obj_type;
  item.edited = store.clock.tick();
  const source = param(params, 'source');
  if (source !== undefined) item.app = source;
  const permalink = param(params, 'permalink');
  if (permalink) item.plink = permalink;
  const location = param(params, 'location');
  if (location !== undefined) item.location = location;
  const coord = param(params, 'coord');
  if (coord !== undefined) item.coord = coord;
  const expire = dateParam(params, 'expire');
  if (expire !== undefined) item.expires = expire;
  // An edit keeps the original ACL unless the form sends a new one.
  const acl = (['contact_allow', 'group_allow', 'contact_deny', 'group_deny'] as const).map((k) => aclString(params, k));
  if (acl.some((v) => v !== undefined)) {
    [item.allow_cid, item.allow_gid, item.deny_cid, item.deny_gid] = acl.map((v) => v ?? '') as [string, string, string, string];
    item.item_private = item.allow_cid || item.allow_gid || item.deny_cid || item.deny_gid ? 1 : 0;
  }
  if (attach.length > 0) item.attach = phpJsonEncode(attach);
  store.removeTerms(item);
  addTerms(store, channel, item, categoriesOf(params), tags);
  // item_store_update() always reports `term`, even when empty (item_update_edit.txt).
  return json({ success: true, item_id: item.id, item: rawItem(store, item, true) });
}

/** The two minutes of `suppress_duplicates` (Zotlabs/Module/Item.php: `created > now - INTERVAL 2 MINUTE`). */
const DUPLICATE_WINDOW_S = 120;

/**
 * Item::post() with the feature `suppress_duplicates` (on by default,
 * include/features.php): a new item whose body, as linkified, equals the body
 * of any item of the channel created in the last two minutes (comments and
 * received copies included, deleted ones too) is cancelled before
 * item_store() sees its uuid. Edits are exempt. 10.x's Item.php has the same
 * check.
 */
function isDuplicate(store: Store, uid: number, body: string, now: string): boolean {
  const since = addSeconds(now, -DUPLICATE_WINDOW_S);
  return store.items.some((i) => i.uid === uid && i.created > since && i.body === body);
}

/**
 * item/update. Failures as the real hub reports them: no body ->
 * `{"success":false,"message":"no content"}` (also for JSON bodies, which PHP
 * ignores); unknown `parent`/`parent_mid` -> `"invalid post id"`; unknown
 * `post_id` -> an empty 200 (`killme()`). Works with GET parameters too
 * (item_update_via_GET.txt).
 */
export function itemUpdate(ctx: ApiContext): ApiResult {
  const { store, channel, params } = ctx;
  const uid = channel.channel_id;
  const media = params.files.get('media');
  const stored = media ? storeMedia(store, channel, media) : { bodySuffix: '', attach: [] };
  const text = param(params, 'body') ?? '';
  let body = mediaFirst(store.version) && stored.bodySuffix ? `${stored.bodySuffix.trim()}\n\n${text}` : text + stored.bodySuffix;

  const namespace = param(params, 'namespace');
  const remoteId = param(params, 'remote_id');
  const mappingKey = namespace && remoteId ? `${uid}\n${namespace}\n${remoteId}` : undefined;
  const mapped = mappingKey ? store.remoteIds.get(mappingKey) : undefined;

  const postId = intParam(params, 'post_id') || mapped || 0;
  let editing: ItemRow | undefined;
  if (postId) {
    editing = store.items.find((i) => i.id === postId && i.uid === uid);
    if (!editing) return EMPTY_HTML;
  }

  let parentItem: ItemRow | undefined;
  const parentId = intParam(params, 'parent');
  const parentMid = param(params, 'parent_mid');
  if (!editing && (parentId || parentMid)) {
    parentItem = parentId ? store.items.find((i) => i.id === parentId && i.uid === uid) : store.items.find((i) => i.mid === parentMid && i.uid === uid);
    if (!parentItem) return json({ success: false, message: 'invalid post id' });
  }

  if (body.trim() === '' && stored.attach.length === 0 && !flagParam(params, 'allow_empty')) {
    return json({ success: false, message: 'no content' });
  }
  body = body.trim() === '' ? '' : body;
  if (editing) return editItem(ctx, editing, body, stored.attach);

  const me = store.selfXchan(channel);
  const remote = param(params, 'remote_xchan');
  const author = remote && store.xchan(remote) ? remote : me.xchan_hash;
  const thread = parentItem ? (store.itemById(parentItem.parent) ?? parentItem) : undefined;
  const now = store.clock.tick();
  const created = dateParam(params, 'created') ?? now;
  // `$uuid = $message_id ?? item_message_id(); $mid = z_root() . '/item/' . $uuid`: a sent message id is the uuid, never the mid.
  const messageId = param(params, 'message_id')?.replace(/<[^>]*>/g, '');
  const uuid = messageId || uuidFor(`item:${store.nextIdPeek('item')}`);
  const mid = store.localMid(uuid);
  const { body: linked, tags } = linkifyHashtags(store, body);
  if (isDuplicate(store, uid, linked, now)) return json({ success: false, message: 'operation cancelled' });
  // item_store() finds the mid stored already and stores nothing; Item::post() then has no item id to answer with.
  if (store.items.some((i) => i.mid === mid && i.uid === uid)) return json({ success: false, message: 'system error' });
  const id = store.nextId('item');
  const nocomment = flagParam(params, 'nocomment');
  const acl = {
    allow_cid: aclString(params, 'contact_allow') ?? '',
    allow_gid: aclString(params, 'group_allow') ?? '',
    deny_cid: aclString(params, 'contact_deny') ?? '',
    deny_gid: aclString(params, 'group_deny') ?? '',
  };
  // Comments inherit the thread's audience.
  const effectiveAcl = thread ? { allow_cid: thread.allow_cid, allow_gid: thread.allow_gid, deny_cid: thread.deny_cid, deny_gid: thread.deny_gid } : acl;
  const isPrivate = thread ? thread.item_private : effectiveAcl.allow_cid || effectiveAcl.allow_gid || effectiveAcl.deny_cid || effectiveAcl.deny_gid ? 1 : 0;
  const permalink = param(params, 'permalink');

  const row = store.insertItem({
    id,
    uuid,
    mid,
    aid: channel.channel_account_id,
    uid,
    parent: thread?.id ?? id,
    parent_mid: thread?.mid ?? mid,
    thr_parent: parentItem?.mid ?? mid,
    created,
    edited: created,
    commented: created,
    received: now,
    changed: now,
    expires: dateParam(params, 'expire') ?? NULL_DATE,
    comments_closed: nocomment ? now : NULL_DATE,
    owner_xchan: thread?.owner_xchan ?? me.xchan_hash,
    author_xchan: author,
    mimetype: param(params, 'mimetype') || 'text/bbcode',
    title: param(params, 'title') ?? '',
    summary: param(params, 'summary') ?? '',
    body: linked,
    app: param(params, 'source') ?? '',
    verb: param(params, 'verb') || defaultVocabulary(store.version, thread !== undefined).verb,
    obj_type: param(params, 'obj_type') || defaultVocabulary(store.version, thread !== undefined).obj_type,
    layout_mid: param(params, 'layout_mid') ?? '',
    attach: stored.attach.length > 0 ? phpJsonEncode(stored.attach) : '',
    sig: signature(`item:${uuid}`),
    location: param(params, 'location') ?? '',
    coord: param(params, 'coord') ?? '',
    public_policy: param(params, 'public_policy') ?? '',
    ...effectiveAcl,
    item_private: isPrivate,
    item_consensus: flagParam(params, 'consensus') ? 1 : 0,
    item_nocomment: nocomment ? 1 : 0,
    item_wall: thread ? thread.item_wall : 1,
    item_thread_top: thread ? 0 : 1,
    item_type: intParam(params, 'webpage'),
    // "even if the post arrived via API we are considering that it originated on this site by default"
    item_origin: param(params, 'origin') === undefined ? 1 : intParam(params, 'origin') ? 1 : 0,
    ...(permalink ? { plink: permalink } : {}),
  });
  addTerms(store, channel, row, categoriesOf(params), tags);
  if (thread) {
    thread.commented = created;
    thread.changed = now;
    thread.item_retained = 1;
  }
  if (mappingKey) store.remoteIds.set(mappingKey, row.id);
  channel.channel_lastpost = now;
  deliverLocally(store, row, now);
  if (!storesAddItems(store.version)) return json({ success: true, item_id: row.id, item: rawItem(store, row, false) });
  // 10.x: item_store() also stores the Add item of a post or comment in the channel's own thread, and answers with it.
  const approval = needsAddItem(store, row, channel.channel_hash) ? storeAddItem(store, row, channel.channel_address) : null;
  return json({
    success: true,
    item_id: row.id,
    item: rawItem(store, row, false),
    approval_id: approval?.id ?? 0,
    approval: approval ? rawItem(store, approval, false) : null,
    thr_parent_uuid: parentItem?.uuid ?? row.uuid,
  });
}

/**
 * POST channel/stream: `post_activity_item()` stores a post that is not a wall
 * item (item_wall 0, item_unseen 1) and returns the raw row as `activity`
 * (channel_stream_POST.txt).
 */
export function createActivityItem(ctx: ApiContext): ApiResult {
  const { store, channel, params } = ctx;
  const body = param(params, 'body') ?? '';
  if (body.trim() === '') return json({ success: false, message: 'no content' });
  const me = store.selfXchan(channel);
  const now = store.clock.tick();
  const id = store.nextId('item');
  const uuid = uuidFor(`item:${id}`);
  const row = store.insertItem({
    id,
    uuid,
    uid: channel.channel_id,
    aid: channel.channel_account_id,
    owner_xchan: me.xchan_hash,
    author_xchan: me.xchan_hash,
    created: now,
    title: param(params, 'title') ?? '',
    body,
    sig: signature(`item:${uuid}`),
    item_wall: 0,
    item_unseen: 1,
  });
  return json({ success: true, item_id: row.id, activity: rawItem(store, row, false) });
}

/** PHP's urlencode(), which the hub applies to an attachment's title: `résumé ü.txt` is stored as `r%C3%A9sum%C3%A9+%C3%BC.txt`. */
export function phpUrlencode(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}
