/**
 * Hubzilla record shapes: the raw JSON the channel API sends (loose, since
 * PHP >= 8.1 sends numbers and older PHP numeric strings), and the records
 * the client hands out after normalise.ts: numbers as numbers, 0/1 flags as
 * booleans, zero dates as null, timestamps as ISO 8601 UTC. Field names stay
 * the REST names (snake_case) so grep works both ways.
 */

/** Any JSON object as Hubzilla sends it, before normalisation. */
export type RawRecord = Readonly<Record<string, unknown>>;

/** The owner/author block of an activity object (`encode_item_xchan()`): a summary, not the full xchan. */
export interface XchanSummary {
  name: string;
  address: string;
  url: string;
  network: string;
  photo_mimetype: string;
  photo_src: string;
  /** The xchan's guid (the activity calls it `id`). */
  guid: string;
  guid_sig: string;
  /** PEM public key. */
  pubkey: string;
}

/** A full xchan, as GET xchan returns it (`xchan_` prefix removed, `xchan_addr` as `address`). */
export interface XchanRecord {
  hash: string;
  guid: string;
  guid_sig: string;
  pubkey: string;
  photo_mimetype: string;
  photo_l: string;
  photo_m: string;
  photo_s: string;
  address: string;
  url: string;
  connurl: string;
  follow: string;
  connpage: string;
  name: string;
  network: string;
  instance_url: string;
  flags: number | null;
  photo_date: string | null;
  name_date: string | null;
  /** Hubzilla 10: when the hub last refreshed the xchan; null on 8.8, which does not record it. */
  updated: string | null;
  hidden: boolean;
  orphan: boolean;
  censored: boolean;
  selfcensored: boolean;
  system: boolean;
  pubforum: boolean;
  deleted: boolean;
}

/** An attachment of an item (`attach`, decoded from a JSON string where the row holds one). */
export interface AttachmentRecord {
  href: string;
  length: number | null;
  type: string;
  title: string;
  revision: number | null;
}

/** A tag of an item: activity `tags[]` or an item row's `term[]`. */
export interface TagRecord {
  tag: string;
  url: string;
  /** `hashtag`, `mention`, `category`, `file`, … (Hubzilla's termtype() names). */
  type: string;
}

/** The item flags, as booleans; null where the encoding does not carry the flag. */
export interface ItemFlags {
  origin: boolean | null;
  unseen: boolean | null;
  starred: boolean | null;
  uplink: boolean | null;
  consensus: boolean;
  wall: boolean | null;
  thread_top: boolean;
  notshown: boolean;
  nsfw: boolean;
  relay: boolean | null;
  mentionsme: boolean | null;
  nocomment: boolean | null;
  obscured: boolean;
  verified: boolean | null;
  retained: boolean | null;
  rss: boolean | null;
  deleted: boolean;
  hidden: boolean;
  unpublished: boolean | null;
  delayed: boolean | null;
  pending_remove: boolean | null;
  blocked: boolean | null;
  private: boolean;
  direct: boolean;
}

/**
 * One item, from either encoding: the activity object of the streams and
 * item/full (`message_id`, `owner{}`, `author{}`, `flags[]`; numeric ids only
 * in item/full's mirror fields), or the raw row item/update answers with
 * (`mid`, `owner_xchan`, `item_*`). Activity names are used throughout.
 */
export interface ItemRecord {
  id: number | null;
  parent: number | null;
  uid: number | null;
  aid: number | null;
  uuid: string;
  message_id: string;
  message_top: string;
  message_parent: string;
  created: string | null;
  edited: string | null;
  expires: string | null;
  commented: string | null;
  received: string | null;
  changed: string | null;
  comments_closed: string | null;
  mimetype: string;
  title: string;
  summary: string;
  body: string;
  html: string;
  app: string;
  lang: string;
  revision: number | null;
  verb: string;
  object_type: string;
  target_type: string;
  /** Decoded activity object, or null when absent. */
  object: unknown;
  target: unknown;
  permalink: string;
  llink: string;
  location: string;
  longlat: string;
  signature: string | null;
  route: string;
  layout_mid: string;
  postopts: string;
  resource_id: string;
  resource_type: string;
  public_scope: string;
  comment_scope: string;
  /** ACL lists; null where the encoding leaves them out (stream activities). */
  allow_cid: string[] | null;
  allow_gid: string[] | null;
  deny_cid: string[] | null;
  deny_gid: string[] | null;
  item_restrict: number | null;
  item_flags: number | null;
  item_type: number | null;
  owner: XchanSummary | null;
  author: XchanSummary | null;
  owner_xchan: string | null;
  author_xchan: string | null;
  source_xchan: string | null;
  attach: AttachmentRecord[];
  tags: TagRecord[];
  flags: ItemFlags;
}

/** A file or folder (attach row) from files, filemeta or filedata. */
export interface FileRecord {
  id: number | null;
  aid: number | null;
  uid: number | null;
  hash: string;
  creator: string | null;
  filename: string;
  filetype: string;
  filesize: number;
  revision: number | null;
  folder: string;
  os_path: string;
  display_path: string;
  os_storage: boolean;
  is_dir: boolean;
  is_photo: boolean;
  flags: number | null;
  created: string | null;
  edited: string | null;
  allow_cid: string[];
  allow_gid: string[];
  deny_cid: string[];
  deny_gid: string[];
}

/** One chunk of a file from filedata: the record, its bytes (base64) and where they sit. */
export interface FileChunk {
  file: FileRecord;
  content: string;
  start: number;
  length: number;
}

/** A photo album from albums. */
export interface AlbumRecord {
  text: string;
  shorttext: string;
  total: number;
  url: string;
  urlencode: string;
  /** The album folder's hash, despite its name. */
  bin2hex: string;
}

/** One stored scale of a photo (photos sends one entry per scale). */
export interface PhotoScaleRecord {
  imgscale: number;
  width: number | null;
  height: number | null;
  filesize: number | null;
  src: string;
}

/** A photo with its scales, grouped from photos' entries by resource_id. */
export interface PhotoRecord {
  resource_id: string;
  created: string | null;
  edited: string | null;
  title: string;
  description: string;
  album: string;
  filename: string;
  mimetype: string;
  photo_usage: number | null;
  allow_cid: string[];
  allow_gid: string[];
  deny_cid: string[];
  deny_gid: string[];
  scales: PhotoScaleRecord[];
}

/** A privacy group from group. */
export interface GroupRecord {
  id: number;
  hash: string;
  uid: number | null;
  visible: boolean;
  deleted: boolean;
  gname: string;
}

/** An address-book entry (abook_* columns); the xchan comes separately. */
export interface ConnectionRecord {
  abook_id: number;
  abook_xchan: string;
  abook_closeness: number | null;
  abook_created: string | null;
  abook_updated: string | null;
  abook_connected: string | null;
  abook_dob: string | null;
  abook_blocked: boolean;
  abook_ignored: boolean;
  abook_hidden: boolean;
  abook_archived: boolean;
  abook_pending: boolean;
  abook_unconnected: boolean;
  abook_self: boolean;
  abook_feed: boolean;
  abook_not_here: boolean;
  abook_role: string | null;
  abook_instance: string;
  /** Legacy permission bit fields (PERMS_* constants); 0 on hubs that keep permissions in abconfig. */
  abook_my_perms: number;
  abook_their_perms: number;
  /** The joined xchan; null where the join found none. */
  xchan: XchanRecord | null;
}

/** A member of a privacy group: the pgrp_member row with its (LEFT-joined, so nullable) abook and xchan. */
export interface GroupMemberRecord {
  id: number;
  gid: number;
  xchan_hash: string;
  connection: ConnectionRecord | null;
  xchan: XchanRecord | null;
}

/** The safe part of the channel row (verify): never the key, password or salt. */
export interface ChannelInfo {
  channel_id: number | null;
  channel_address: string;
  channel_name: string;
  channel_hash: string;
  channel_guid: string;
  channel_timezone: string;
  channel_location: string;
  /** The channel's page (`xchan_url`, `<hub>/channel/<nickname>`): the hub's own base URL is before `/channel/`. */
  url: string;
}

/** What item/update answers on success. */
export interface ItemUpdateResult {
  item_id: number | null;
  item: ItemRecord | null;
}

/** One abconfig row: a setting of a connection (`cat`/`k` = `v`), e.g. `my_perms`/`view_stream` = `1`. */
export interface ConnectionSettingRecord {
  xchan: string;
  cat: string;
  k: string;
  v: string;
}

/** file/export: the file and its ancestor folders (root first, the file last), with where the hub serves them. */
export interface FileExportRecord {
  fetch_url: string;
  original_channel: string;
  attach: FileRecord[];
}

/** One scale of a photo from `photo`, with its bytes (base64). */
export interface PhotoContentRecord {
  resource_id: string;
  imgscale: number;
  mimetype: string;
  filename: string;
  content: string;
}
