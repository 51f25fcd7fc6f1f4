/**
 * The database rows the sandbox keeps, named and ordered exactly as Hubzilla
 * 8.8.7's tables (`SELECT *` output order matters: the real server emits JSON
 * keys in column order). Integer columns are numbers (PHP >= 8.1 pdo_mysql),
 * except where the real schema stores numeric strings.
 */

/** An account: the login (email) that owns one or more channels. */
export interface AccountRecord {
  account_id: number;
  email: string;
  /** Plain password, kept only so the sandbox can check logins. */
  password: string;
  salt: string;
  password_hash: string;
  /** uid of the channel an email login lands on. */
  default_channel: number;
}

/** The `channel` row (without the per-permission columns, added in exports). */
export interface ChannelRow {
  channel_id: number;
  channel_account_id: number;
  channel_primary: number;
  channel_name: string;
  channel_address: string;
  channel_guid: string;
  channel_guid_sig: string;
  channel_hash: string;
  channel_portable_id: string;
  channel_timezone: string;
  channel_location: string;
  channel_theme: string;
  channel_startpage: string;
  channel_pubkey: string;
  channel_prvkey: string;
  /** Hubzilla 10: the channel's encryption key pair (the private half is a secret like channel_prvkey). */
  channel_epubkey?: string;
  channel_eprvkey?: string;
  channel_notifyflags: number;
  channel_pageflags: number;
  channel_dirdate: string;
  channel_lastpost: string;
  channel_deleted: string;
  channel_active: string;
  channel_max_anon_mail: number;
  channel_max_friend_req: number;
  channel_expire_days: number;
  channel_passwd_reset: string;
  channel_default_group: string;
  channel_allow_cid: string;
  channel_allow_gid: string;
  channel_deny_cid: string;
  channel_deny_gid: string;
  channel_removed: number;
  channel_system: number;
  channel_moved: string;
  channel_password: string;
  channel_salt: string;
}

export interface XchanRow {
  xchan_hash: string;
  xchan_guid: string;
  xchan_guid_sig: string;
  xchan_pubkey: string;
  xchan_photo_mimetype: string;
  xchan_photo_l: string;
  xchan_photo_m: string;
  xchan_photo_s: string;
  xchan_addr: string;
  xchan_url: string;
  xchan_connurl: string;
  xchan_follow: string;
  xchan_connpage: string;
  xchan_name: string;
  xchan_network: string;
  xchan_instance_url: string;
  xchan_flags: number;
  xchan_photo_date: string;
  xchan_name_date: string;
  xchan_hidden: number;
  xchan_orphan: number;
  xchan_censored: number;
  xchan_selfcensored: number;
  xchan_system: number;
  xchan_pubforum: number;
  xchan_deleted: number;
  /** Hubzilla 10: the encryption public key, and when the xchan was last refreshed. */
  xchan_epubkey?: string;
  xchan_updated?: string;
}

export interface HublocRow {
  hubloc_id: number;
  hubloc_guid: string;
  hubloc_guid_sig: string;
  hubloc_id_url: string;
  hubloc_hash: string;
  hubloc_addr: string;
  hubloc_network: string;
  hubloc_flags: number;
  hubloc_status: number;
  hubloc_url: string;
  hubloc_url_sig: string;
  hubloc_site_id: string;
  hubloc_host: string;
  hubloc_callback: string;
  hubloc_connect: string;
  hubloc_sitekey: string;
  hubloc_updated: string;
  hubloc_connected: string;
  hubloc_primary: number;
  hubloc_orphancheck: number;
  hubloc_error: number;
  hubloc_deleted: number;
}

/** An address-book entry (a connection), `abook` table. */
export interface AbookRow {
  abook_id: number;
  abook_account: number;
  abook_channel: number;
  abook_xchan: string;
  abook_my_perms: number;
  abook_their_perms: number;
  abook_closeness: number;
  abook_created: string;
  abook_updated: string;
  abook_connected: string;
  abook_dob: string;
  abook_flags: number;
  abook_blocked: number;
  abook_ignored: number;
  abook_hidden: number;
  abook_archived: number;
  abook_pending: number;
  abook_unconnected: number;
  abook_self: number;
  abook_feed: number;
  abook_not_here: number;
  abook_profile: string;
  abook_incl: string;
  abook_excl: string;
  abook_instance: string;
  abook_role: string;
}

/** Connection metadata, `abconfig` table; `v` is always a string. */
export interface AbconfigRow {
  id: number;
  chan: number;
  xchan: string;
  cat: string;
  k: string;
  v: string;
}

/** Channel settings, `pconfig` table; `v` is always a string. */
export interface PconfigRow {
  id: number;
  uid: number;
  cat: string;
  k: string;
  v: string;
  updated: string;
}

/** A privacy group, `pgrp` table. */
export interface GroupRow {
  id: number;
  hash: string;
  uid: number;
  visible: number;
  deleted: number;
  gname: string;
}

/** A privacy group membership, `pgrp_member` table. */
export interface GroupMemberRow {
  id: number;
  uid: number;
  gid: number;
  xchan: string;
}

export interface ProfileRow {
  id: number;
  profile_guid: string;
  aid: number;
  uid: number;
  profile_name: string;
  is_default: number;
  hide_friends: number;
  fullname: string;
  pdesc: string;
  chandesc: string;
  dob: string;
  dob_tz: string;
  address: string;
  locality: string;
  region: string;
  postal_code: string;
  country_name: string;
  hometown: string;
  gender: string;
  marital: string;
  partner: string;
  howlong: string;
  sexual: string;
  politic: string;
  religion: string;
  keywords: string;
  likes: string;
  dislikes: string;
  about: string;
  summary: string;
  music: string;
  book: string;
  tv: string;
  film: string;
  interest: string;
  romance: string;
  employment: string;
  education: string;
  contact: string;
  channels: string;
  homepage: string;
  photo: string;
  thumb: string;
  publish: number;
  profile_vcard: string;
}

/** A conversation item, `item` table (column order as `SELECT *` returns it). */
export interface ItemRow {
  id: number;
  uuid: string;
  mid: string;
  aid: number;
  uid: number;
  parent: number;
  parent_mid: string;
  thr_parent: string;
  created: string;
  edited: string;
  expires: string;
  commented: string;
  received: string;
  changed: string;
  comments_closed: string;
  owner_xchan: string;
  author_xchan: string;
  source_xchan: string;
  mimetype: string;
  title: string;
  summary: string;
  body: string;
  html: string;
  app: string;
  lang: string;
  revision: number;
  verb: string;
  obj_type: string;
  /** JSON text ('' when none), as stored. */
  obj: string;
  tgt_type: string;
  /** JSON text ('' when none), as stored. */
  target: string;
  layout_mid: string;
  postopts: string;
  route: string;
  llink: string;
  plink: string;
  resource_id: string;
  resource_type: string;
  /** JSON text ('' when none), as stored. */
  attach: string;
  sig: string;
  location: string;
  coord: string;
  public_policy: string;
  comment_policy: string;
  allow_cid: string;
  allow_gid: string;
  deny_cid: string;
  deny_gid: string;
  item_restrict: number;
  item_flags: number;
  item_private: number;
  item_origin: number;
  item_unseen: number;
  item_starred: number;
  item_uplink: number;
  item_consensus: number;
  item_wall: number;
  item_thread_top: number;
  item_notshown: number;
  item_nsfw: number;
  item_relay: number;
  item_mentionsme: number;
  item_nocomment: number;
  item_obscured: number;
  item_verified: number;
  item_retained: number;
  item_rss: number;
  item_deleted: number;
  item_type: number;
  item_hidden: number;
  item_unpublished: number;
  item_delayed: number;
  item_pending_remove: number;
  item_blocked: number;
}

/** Term types (`TERM_*` constants in boot.php). */
export const TERM_HASHTAG = 1;
export const TERM_MENTION = 2;
export const TERM_CATEGORY = 3;
export const TERM_FILE = 5;

/** A tag, mention or category of an item, `term` table. */
export interface TermRow {
  tid: number;
  uid: number;
  /** Item id. */
  oid: number;
  /** Object type; 1 = item. */
  otype: number;
  ttype: number;
  term: string;
  url: string;
}

/** A stored file or folder, `attach` table (column order as `SELECT *`). */
export interface AttachRow {
  id: number;
  aid: number;
  uid: number;
  hash: string;
  creator: string;
  filename: string;
  filetype: string;
  filesize: number;
  revision: number;
  folder: string;
  flags: number;
  is_dir: number;
  is_photo: number;
  os_storage: number;
  os_path: string;
  display_path: string;
  created: string;
  edited: string;
  allow_cid: string;
  allow_gid: string;
  deny_cid: string;
  deny_gid: string;
}

/** One stored scale of a photo, `photo` table (`content` kept apart as bytes). */
export interface PhotoRow {
  id: number;
  aid: number;
  uid: number;
  xchan: string;
  resource_id: string;
  created: string;
  edited: string;
  expires: string;
  title: string;
  description: string;
  album: string;
  filename: string;
  mimetype: string;
  height: number;
  width: number;
  filesize: number;
  imgscale: number;
  photo_usage: number;
  profile: number;
  is_nsfw: number;
  os_storage: number;
  os_path: string;
  display_path: string;
  photo_flags: number;
  allow_cid: string;
  allow_gid: string;
  deny_cid: string;
  deny_gid: string;
}

/** An OAuth2 client (`oauth_clients`); `user_id` is a channel id. */
export interface OAuthClientRecord {
  client_id: string;
  client_secret: string;
  user_id: number;
}
