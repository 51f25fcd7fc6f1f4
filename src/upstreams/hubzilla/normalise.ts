/**
 * Hubzilla's values made regular, once, at the client boundary: numbers from
 * numbers or numeric strings (PHP >= 8.1 sends ints, older PHP strings), 0/1
 * flags as booleans, zero dates (`0000-00-00 00:00:00`, `0001-01-01 …`) as
 * null, ACL strings (`<a><b>`) as lists, and JSON-in-a-string fields decoded.
 * Also the secret filter for exports. Pure: no I/O.
 */
import type {
  AlbumRecord,
  AttachmentRecord,
  ChannelInfo,
  ConnectionRecord,
  FileChunk,
  FileRecord,
  GroupMemberRecord,
  GroupRecord,
  ItemFlags,
  ItemRecord,
  PhotoRecord,
  RawRecord,
  TagRecord,
  XchanRecord,
  XchanSummary,
} from './records.js';

export function isObject(value: unknown): value is RawRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A number from a number or a numeric string; null for anything else. */
export function int(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  return null;
}

/** A 0/1 flag (number, numeric string or boolean) as a boolean; absent is false. */
export function flag(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  const n = int(value);
  return n !== null && n !== 0;
}

/** Like flag(), but null when the field is absent. */
function optFlag(record: RawRecord, key: string): boolean | null {
  return key in record && record[key] !== null ? flag(record[key]) : null;
}

export function str(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return '';
}

function optStr(value: unknown): string | null {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : null;
}

/**
 * A Hubzilla timestamp (`YYYY-MM-DD HH:MM:SS`, UTC) as ISO 8601; null for
 * the zero dates (`0000-00-00 …` from encode_item, `0001-01-01 …` in rows)
 * and for anything unreadable.
 */
export function date(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const match = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]00:?00)?$/.exec(value.trim());
  if (!match) return null;
  const [, y, mo, d, h, mi, sec] = match as unknown as [string, string, string, string, string, string, string];
  const year = Number(y);
  if (year <= 1) return null;
  // A valid timestamp is already its ISO form; only odd ones (day 31 of a 30-day month…) go through Date, which rolls them over.
  if (isValidDate(year, Number(mo), Number(d)) && Number(h) < 24 && Number(mi) < 60 && Number(sec) < 60) return `${y}-${mo}-${d}T${h}:${mi}:${sec}.000Z`;
  const parsed = new Date(`${y}-${mo}-${d}T${h}:${mi}:${sec}Z`);
  return Number.isNaN(parsed.getTime()) ? null : parsed.toISOString();
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isValidDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (DAYS_IN_MONTH[month - 1] ?? 0) + (leap ? 1 : 0);
}

/** An ACL string `<hash1><hash2>` as its hashes; null when absent (stream activities carry no ACL). */
export function optAclList(value: unknown): string[] | null {
  return value === undefined || value === null ? null : aclList(value);
}

/** An ACL string `<hash1><hash2>` as its hashes. */
export function aclList(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(str).filter((s) => s !== '');
  const text = str(value);
  const list: string[] = [];
  // What /<([^<>]*)>/g finds, without a match object per entry: most ACLs are empty or short.
  for (let open = text.indexOf('<'); open !== -1; ) {
    let end = open + 1;
    while (end < text.length && text[end] !== '<' && text[end] !== '>') end++;
    if (text[end] === '>') {
      if (end > open + 1) list.push(text.slice(open + 1, end));
      open = text.indexOf('<', end + 1);
    } else {
      open = end < text.length ? end : -1;
    }
  }
  return list;
}

/** JSON held in a string (item rows keep `attach` and `obj` that way); the value itself otherwise. */
function decoded(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? null;
  if (value === '') return null;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

function summary(value: unknown): XchanSummary | null {
  if (!isObject(value)) return null;
  const photo = isObject(value.photo) ? value.photo : {};
  return {
    name: str(value.name),
    address: str(value.address),
    url: str(value.url),
    network: str(value.network),
    photo_mimetype: str(photo.mimetype),
    photo_src: str(photo.src),
    guid: str(value.id),
    guid_sig: str(value.id_sig),
    pubkey: str(value.key),
  };
}

function attachments(value: unknown): AttachmentRecord[] {
  const list = decoded(value);
  if (!Array.isArray(list)) return [];
  return list.filter(isObject).map((a) => ({
    href: str(a.href),
    length: int(a.length),
    type: str(a.type),
    title: formDecoded(str(a.title)),
    revision: int(a.revision),
  }));
}

/**
 * The hub stores an attachment's title form-encoded (`r%C3%A9sum%C3%A9+%C3%BC.txt`
 * for `résumé ü.txt`): decoded for the reader, kept as sent when it is not valid encoding.
 */
function formDecoded(title: string): string {
  if (!/[%+]/.test(title)) return title;
  try {
    return decodeURIComponent(title.replace(/\+/g, ' '));
  } catch {
    return title;
  }
}

/** termtype() names of Hubzilla's TERM_* numbers, for item rows' `term[]`. */
const TERM_TYPES: Readonly<Record<number, string>> = {
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

function tags(record: RawRecord): TagRecord[] {
  if (Array.isArray(record.tags)) {
    return record.tags.filter(isObject).map((t) => ({ tag: str(t.tag), url: str(t.url), type: str(t.type) }));
  }
  if (Array.isArray(record.term)) {
    return record.term.filter(isObject).map((t) => ({ tag: str(t.term), url: str(t.url), type: TERM_TYPES[int(t.ttype) ?? 0] ?? 'unknown' }));
  }
  return [];
}

function itemFlags(record: RawRecord, isTop: boolean): ItemFlags {
  // Activity objects carry `flags[]` (absent on plain comments); item/full's
  // mirror fields and item rows carry item_* numbers. Either may be missing.
  const named = new Set(Array.isArray(record.flags) ? record.flags.map(str) : []);
  const either = (column: string, name: string): boolean => (column in record ? flag(record[column]) : named.has(name));
  const privacy = int(record.item_private);
  return {
    origin: optFlag(record, 'item_origin'),
    unseen: optFlag(record, 'item_unseen'),
    starred: optFlag(record, 'item_starred'),
    uplink: optFlag(record, 'item_uplink'),
    consensus: either('item_consensus', 'consensus'),
    wall: optFlag(record, 'item_wall'),
    thread_top: 'item_thread_top' in record ? flag(record.item_thread_top) : named.has('thread_parent') || isTop,
    notshown: either('item_notshown', 'notshown'),
    nsfw: either('item_nsfw', 'nsfw'),
    relay: optFlag(record, 'item_relay'),
    mentionsme: optFlag(record, 'item_mentionsme'),
    nocomment: optFlag(record, 'item_nocomment'),
    obscured: either('item_obscured', 'obscured'),
    verified: optFlag(record, 'item_verified'),
    retained: optFlag(record, 'item_retained'),
    rss: optFlag(record, 'item_rss'),
    deleted: either('item_deleted', 'deleted'),
    hidden: either('item_hidden', 'hidden'),
    unpublished: optFlag(record, 'item_unpublished'),
    delayed: optFlag(record, 'item_delayed'),
    pending_remove: optFlag(record, 'item_pending_remove'),
    blocked: optFlag(record, 'item_blocked'),
    // item_private: 0 public, 1 restricted, 2 direct message.
    private: privacy !== null ? privacy > 0 : named.has('private') || named.has('direct'),
    direct: privacy !== null ? privacy === 2 : named.has('direct'),
  };
}

/** An item from an activity object (streams, item/full) or a raw item row (item/update). */
export function normaliseItem(record: RawRecord): ItemRecord {
  const messageId = str(record.message_id ?? record.mid);
  const top = str(record.message_top ?? record.parent_mid) || messageId;
  const id = int(record.id);
  const parent = int(record.parent);
  return {
    id,
    parent,
    uid: int(record.uid),
    aid: int(record.aid),
    uuid: str(record.uuid),
    message_id: messageId,
    message_top: top,
    message_parent: str(record.message_parent ?? record.thr_parent) || top,
    created: date(record.created),
    edited: date(record.edited),
    expires: date(record.expires),
    commented: date(record.commented),
    received: date(record.received),
    changed: date(record.changed),
    comments_closed: date(record.comments_closed),
    mimetype: str(record.mimetype) || 'text/bbcode',
    title: str(record.title),
    summary: str(record.summary),
    body: str(record.body),
    html: str(record.html),
    app: str(record.app),
    lang: str(record.lang),
    revision: int(record.revision),
    verb: str(record.verb),
    object_type: str(record.object_type ?? record.obj_type),
    target_type: str(record.target_type ?? record.tgt_type),
    object: decoded(record.object ?? record.obj),
    target: decoded(record.target),
    permalink: str(record.permalink ?? record.plink),
    llink: str(record.llink),
    location: str(record.location),
    longlat: str(record.longlat ?? record.coord),
    // As the hub sends it: `""` for an item it did not sign, null only where the encoding has no signature.
    signature: optStr(record.signature ?? record.sig),
    route: str(record.route),
    layout_mid: str(record.layout_mid),
    postopts: str(record.postopts),
    resource_id: str(record.resource_id),
    resource_type: str(record.resource_type),
    public_scope: str(record.public_scope ?? record.public_policy),
    comment_scope: str(record.comment_scope ?? record.comment_policy),
    allow_cid: optAclList(record.allow_cid),
    allow_gid: optAclList(record.allow_gid),
    deny_cid: optAclList(record.deny_cid),
    deny_gid: optAclList(record.deny_gid),
    item_restrict: int(record.item_restrict),
    item_flags: int(record.item_flags),
    item_type: int(record.item_type),
    owner: summary(record.owner),
    author: summary(record.author),
    owner_xchan: optStr(record.owner_xchan),
    author_xchan: optStr(record.author_xchan),
    source_xchan: optStr(record.source_xchan) || null,
    attach: attachments(record.attach),
    tags: tags(record),
    flags: itemFlags(record, messageId !== '' && messageId === top),
  };
}

/**
 * False for the items Hubzilla 10 stores beside each post and comment of a
 * channel's own threads: an `Add` activity (the channel adding the item to
 * the thread's collection) with an empty body, in the same thread. They are
 * bookkeeping, not content: kept out of every stream and thread, so they
 * never read as empty comments.
 */
export function isContent(item: ItemRecord): boolean {
  return item.verb !== 'Add';
}

/** An xchan from GET xchan (unprefixed keys, `address`) or a joined row (`xchan_` prefix, `xchan_addr`). */
export function normaliseXchan(record: RawRecord, prefix = ''): XchanRecord | null {
  const get = (key: string): unknown => record[`${prefix}${key}`];
  const hash = get('hash');
  if (typeof hash !== 'string' || hash === '') return null;
  return {
    hash,
    guid: str(get('guid')),
    guid_sig: str(get('guid_sig')),
    pubkey: str(get('pubkey')),
    photo_mimetype: str(get('photo_mimetype')),
    photo_l: str(get('photo_l')),
    photo_m: str(get('photo_m')),
    photo_s: str(get('photo_s')),
    address: str(get(prefix ? 'addr' : 'address') ?? get('addr')),
    url: str(get('url')),
    connurl: str(get('connurl')),
    follow: str(get('follow')),
    connpage: str(get('connpage')),
    name: str(get('name')),
    network: str(get('network')),
    instance_url: str(get('instance_url')),
    flags: int(get('flags')),
    photo_date: date(get('photo_date')),
    name_date: date(get('name_date')),
    updated: date(get('updated')),
    hidden: flag(get('hidden')),
    orphan: flag(get('orphan')),
    censored: flag(get('censored')),
    selfcensored: flag(get('selfcensored')),
    system: flag(get('system')),
    pubforum: flag(get('pubforum')),
    deleted: flag(get('deleted')),
  };
}

export function normaliseFile(record: RawRecord): FileRecord {
  return {
    id: int(record.id),
    aid: int(record.aid),
    uid: int(record.uid),
    hash: str(record.hash),
    creator: optStr(record.creator),
    filename: str(record.filename),
    filetype: str(record.filetype),
    filesize: int(record.filesize) ?? 0,
    revision: int(record.revision),
    folder: str(record.folder),
    os_path: str(record.os_path),
    display_path: str(record.display_path),
    os_storage: flag(record.os_storage),
    is_dir: flag(record.is_dir),
    is_photo: flag(record.is_photo),
    flags: int(record.flags),
    created: date(record.created),
    edited: date(record.edited),
    allow_cid: aclList(record.allow_cid),
    allow_gid: aclList(record.allow_gid),
    deny_cid: aclList(record.deny_cid),
    deny_gid: aclList(record.deny_gid),
  };
}

/**
 * A filedata answer. A directory has `content:""` and no start/length; a
 * file the hub cannot open has its storage path as `content` and no
 * start/length either: both are null here, never bytes.
 */
export function normaliseFileChunk(record: RawRecord): FileChunk | null {
  const attach = record.attach;
  if (!isObject(attach)) return null;
  const start = int(attach.start);
  const length = int(attach.length);
  if (start === null || length === null) return null;
  return { file: normaliseFile(attach), content: str(attach.content), start, length };
}

export function normaliseAlbum(record: RawRecord): AlbumRecord {
  return {
    text: str(record.text),
    shorttext: str(record.shorttext),
    total: int(record.total) ?? 0,
    url: str(record.url),
    urlencode: str(record.urlencode),
    bin2hex: str(record.bin2hex),
  };
}

/** photos sends one entry per stored scale: group them into photos, in first-seen order. */
export function groupPhotos(entries: readonly RawRecord[]): PhotoRecord[] {
  const byId = new Map<string, PhotoRecord>();
  for (const entry of entries) {
    const id = str(entry.resource_id);
    let photo = byId.get(id);
    if (!photo) {
      photo = {
        resource_id: id,
        created: date(entry.created),
        edited: date(entry.edited),
        title: str(entry.title),
        description: str(entry.description),
        album: str(entry.album),
        filename: str(entry.filename),
        mimetype: str(entry.mimetype),
        photo_usage: int(entry.photo_usage),
        allow_cid: aclList(entry.allow_cid),
        allow_gid: aclList(entry.allow_gid),
        deny_cid: aclList(entry.deny_cid),
        deny_gid: aclList(entry.deny_gid),
        scales: [],
      };
      byId.set(id, photo);
    }
    photo.scales.push({
      imgscale: int(entry.imgscale) ?? 0,
      width: int(entry.width),
      height: int(entry.height),
      filesize: int(entry.filesize),
      src: str(entry.src),
    });
  }
  for (const photo of byId.values()) photo.scales.sort((a, b) => a.imgscale - b.imgscale);
  return [...byId.values()];
}

export function normaliseGroup(record: RawRecord): GroupRecord {
  return {
    id: int(record.id) ?? 0,
    hash: str(record.hash),
    uid: int(record.uid),
    visible: flag(record.visible),
    deleted: flag(record.deleted),
    gname: str(record.gname),
  };
}

/** An abook row (abook_* columns, then xchan_* columns); null when the LEFT join found no abook. */
export function normaliseConnection(record: RawRecord): ConnectionRecord | null {
  const id = int(record.abook_id);
  if (id === null) return null;
  return {
    abook_id: id,
    abook_xchan: str(record.abook_xchan),
    abook_closeness: int(record.abook_closeness),
    abook_created: date(record.abook_created),
    abook_updated: date(record.abook_updated),
    abook_connected: date(record.abook_connected),
    abook_dob: date(record.abook_dob),
    abook_blocked: flag(record.abook_blocked),
    abook_ignored: flag(record.abook_ignored),
    abook_hidden: flag(record.abook_hidden),
    abook_archived: flag(record.abook_archived),
    abook_pending: flag(record.abook_pending),
    abook_unconnected: flag(record.abook_unconnected),
    abook_self: flag(record.abook_self),
    abook_feed: flag(record.abook_feed),
    abook_not_here: flag(record.abook_not_here),
    abook_role: optStr(record.abook_role),
    abook_instance: str(record.abook_instance),
    abook_my_perms: int(record.abook_my_perms) ?? 0,
    abook_their_perms: int(record.abook_their_perms) ?? 0,
    xchan: normaliseXchan(record, 'xchan_'),
  };
}

export function normaliseGroupMember(record: RawRecord): GroupMemberRecord {
  return {
    id: int(record.id) ?? 0,
    gid: int(record.gid) ?? 0,
    xchan_hash: str(record.xchan),
    connection: normaliseConnection(record),
    xchan: normaliseXchan(record, 'xchan_'),
  };
}

/** The public fields of verify's channel row; the rest (key, password hash, salt) is dropped here. */
export function normaliseChannel(record: RawRecord): ChannelInfo | null {
  const address = record.channel_address;
  if (typeof address !== 'string' || address === '') return null;
  return {
    channel_id: int(record.channel_id),
    channel_address: address,
    channel_name: str(record.channel_name),
    channel_hash: str(record.channel_hash),
    channel_guid: str(record.channel_guid),
    channel_timezone: str(record.channel_timezone),
    channel_location: str(record.channel_location),
    url: str(record.xchan_url),
  };
}

/** Key names that hold secrets: private keys, password hashes, salts, tokens. */
export const SECRET_KEY = /prvkey|password|passwd|salt|secret|token/i;

/**
 * A copy of `value` without secrets, at any depth: every key that names a
 * private key, password, salt, secret or token, and every config row
 * (`{k, v}`, as in pconfig) whose `k` names one. The channel export sends
 * `channel_prvkey`, and verify the password hash and salt.
 */
export function stripSecrets(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.filter((v) => !(isObject(v) && typeof v.k === 'string' && SECRET_KEY.test(v.k))).map(stripSecrets);
  }
  if (isObject(value)) {
    const clean: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) if (!SECRET_KEY.test(key)) clean[key] = stripSecrets(v);
    return clean;
  }
  if (typeof value === 'string' && /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(value)) return '[removed]';
  return value;
}
