/**
 * Demo data of the Hubzilla sandbox. Fixed and deterministic: every start
 * builds byte-identical records (ids, hashes, timestamps, file bytes); only
 * session cookies and OAuth2 tokens are random.
 *
 * Hub: records embed the base URL https://hub.duograph.test (not the listening
 * address), so addresses are `<nick>@hub.duograph.test`. The sandbox clock
 * starts at 2026-11-21 12:00:00 UTC and advances one second per write; the
 * default channel/stream window (now - 14 days) therefore starts 2026-11-07 12:00:00.
 *
 * Accounts and channels (uid = channel id):
 *   - account 1 demo@example.com / demo-pass: `demo` (uid 2, default, "Demo Channel")
 *     and `demo-projects` (uid 3, "Demo Projects").
 *   - account 2 alice@example.com / alice-pass: `alice` (uid 4, "Alice Example").
 *   - account 3 colon@example.com / pa:ss-word: `colontest` (uid 5); can never log in
 *     (the real hub cuts Basic passwords at the first colon).
 *   - `sys` (uid 1): the hub's system channel, no account (`?channel=sys` is refused).
 *   - OAuth2 client `duograph-gateway` / `gateway-secret` (client_credentials, channel demo).
 *
 * Channel `demo`:
 *   - Connections (abook ids are global, in creation order): self (abook_id 1), alice (5, local
 *     channel), bob@social.example.org (6), carol@hub.example.com (7), dave@mastodon.example
 *     (8, activitypub), erin@friendica.example (9, pending), frank@feeds.example (10, rss feed,
 *     archived). grace@hub.example.com is a known xchan without an abook entry. abconfig holds
 *     `my_perms` rows (17 per connection) and alice's `their_perms`.
 *   - Privacy groups (every channel gets Friends on creation, so ids interleave): Friends (id 1,
 *     the default: demo, alice, bob), Work (5: alice, carol, dave), Family (6: erin, grace ->
 *     grace's abook_* columns are null), Archive (7, deleted=1, still listed: frank), Empty (8, no members).
 *   - Items (ids 1-72 in creation order): 30 wall threads (item_wall 1) with 30 comments = 60
 *     items on the channel stream, by demo, alice, bob, carol and dave; wall-to-wall posts by
 *     alice (threads #5, #26), bob (#12), carol (#19). Plus 8 network-only threads by bob,
 *     carol, dave, erin with 4 comments (12 items, item_wall 0). Photos add hidden items 73-77.
 *     Thread ids: 1 3 5 6 10 12 13 18 20 21 24 27 28 31 35 36 39 42 43 46 48 51 54 56 59 62
 *     64 66 69 72; network threads 9 16 26 33 41 49 57 65. Notable: 1 (two comments, one on
 *     2026-11-15 that puts the old thread in the default channel/stream window), 3 (edited,
 *     titled), 5 and 39 (starred), 12 (categories duograph, release), 13 (app duograph-cli),
 *     18 (attaches notes.txt and report.pdf), 20 (comments closed), 21 (mention of alice),
 *     24 (location, coord), 28 (category travel), 31 (private: group Work), 35
 *     (text/markdown), 36 (consensus), 46 (private: alice), 51 (attaches big-dataset.bin,
 *     category duograph), 59 (expires 2027-01-01), 64 (category release). Hashtags:
 *     #graphql (1, 64), #hubzilla (5, 64), #duograph (42).
 *   - Files: Documents/{notes.txt, readme.md, report.pdf (20 000 bytes)},
 *     Projects/duograph/{config.json, big-dataset.bin (3 145 728 bytes)}; albums 2026-10
 *     (sunrise.png, harbour.png), 2026-11 (team.png), "Lisbon offsite: the team's best
 *     shots" (tram.png, castle.png); every photo is 64x48 with scales 0-3. Hashes: see
 *     `seedFacts()`.
 *   - Bulk files (only with the `bulkFiles: n` option, added after everything above so no other
 *     id or hash moves): folder `Bulk` (2026-11-20 08:00:00) holding bulk-0001.txt .. bulk-n.txt,
 *     text/plain, "Bulk file i of the demo channel.\n", created five to a second after the folder (ties).
 * Channel `demo-projects`: 3 wall posts, group Friends, no files and no albums.
 * Channel `alice`: 2 wall posts, group Friends (alice, demo), file alice-notes.txt.
 */
import { NULL_DATE, addSeconds } from './dates.js';
import { ensureFolder, storeFile } from './files.js';
import { passwordHash, pem, portableId, salt, seededBytes, signature, uuidFor } from './identifiers.js';
import { makePng } from './images.js';
import { PERMISSIONS } from './connections.js';
import { storePhoto } from './photos.js';
import { TERM_CATEGORY, TERM_HASHTAG, TERM_MENTION, type AttachRow, type ChannelRow, type ItemRow, type XchanRow } from './records.js';
import { Store } from './store.js';
import { needsAddItem, storeAddItem } from './add-items.js';
import type { HubzillaVersion } from './versions.js';

/** Loginable demo accounts (email or channel nickname + password). */
export const DEMO_ACCOUNTS: readonly { email: string; password: string; channels: readonly string[] }[] = [
  { email: 'demo@example.com', password: 'demo-pass', channels: ['demo', 'demo-projects'] },
  { email: 'alice@example.com', password: 'alice-pass', channels: ['alice'] },
];

/** An account whose password contains ':' and therefore can never log in by Basic. */
export const COLON_ACCOUNT = { email: 'colon@example.com', password: 'pa:ss-word', channels: ['colontest'] } as const;

/** The seeded OAuth2 client (client_credentials grant) acting as channel `demo`. */
export const OAUTH_CLIENT = { clientId: 'duograph-gateway', clientSecret: 'gateway-secret', channel: 'demo' } as const;

const PERM_LIMITS: Record<string, string> = {
  view_stream: '1',
  send_stream: '128',
  view_profile: '1',
  view_contacts: '1',
  view_storage: '1',
  write_storage: '128',
  view_pages: '1',
  view_wiki: '1',
  write_pages: '128',
  write_wiki: '128',
  post_wall: '128',
  post_comments: '128',
  post_mail: '128',
  post_like: '2',
  chat: '128',
  republish: '128',
  delegate: '128',
};

function remoteXchan(store: Store, addr: string, name: string, network: string, date: string): XchanRow {
  const host = addr.split('@')[1] ?? 'example.invalid';
  const nick = addr.split('@')[0] ?? 'someone';
  const base = `https://${host}`;
  const x: XchanRow = {
    xchan_hash: portableId(`xchan:${addr}`),
    xchan_guid: portableId(`guid:${addr}`),
    xchan_guid_sig: signature(`guid:${addr}`),
    xchan_pubkey: pem(addr, 'PUBLIC KEY'),
    xchan_photo_mimetype: 'image/png',
    xchan_photo_l: `${base}/photo/profile/l/${nick}`,
    xchan_photo_m: `${base}/photo/profile/m/${nick}`,
    xchan_photo_s: `${base}/photo/profile/s/${nick}`,
    xchan_addr: addr,
    xchan_url: network === 'activitypub' ? `${base}/users/${nick}` : `${base}/channel/${nick}`,
    xchan_connurl: network === 'rss' ? '' : `${base}/poco/${nick}`,
    xchan_follow: network === 'rss' ? '' : `${base}/follow?f=&url=%s`,
    xchan_connpage: '',
    xchan_name: name,
    xchan_network: network,
    xchan_instance_url: '',
    xchan_flags: 0,
    xchan_photo_date: date,
    xchan_name_date: date,
    xchan_hidden: 0,
    xchan_orphan: 0,
    xchan_censored: 0,
    xchan_selfcensored: 0,
    xchan_system: 0,
    xchan_pubforum: 0,
    xchan_deleted: 0,
  };
  store.xchans.push(x);
  return x;
}

interface ChannelSpec {
  uid: number;
  aid: number;
  nick: string;
  name: string;
  primary: boolean;
  created: string;
  accountPassword: string;
  system?: boolean;
}

function localChannel(store: Store, spec: ChannelSpec): ChannelRow {
  const { uid, nick, created } = spec;
  const hash = portableId(`channel:${nick}`);
  const guid = portableId(`guid:${nick}`);
  const guidSig = signature(`guid:${nick}`);
  const pubkey = pem(`channel:${nick}`, 'PUBLIC KEY');
  const x: XchanRow = {
    xchan_hash: hash,
    xchan_guid: guid,
    xchan_guid_sig: guidSig,
    xchan_pubkey: pubkey,
    xchan_photo_mimetype: 'image/png',
    xchan_photo_l: `${store.base}/photo/profile/l/${uid}`,
    xchan_photo_m: `${store.base}/photo/profile/m/${uid}`,
    xchan_photo_s: `${store.base}/photo/profile/s/${uid}`,
    xchan_addr: `${nick}@${store.host}`,
    xchan_url: `${store.base}/channel/${nick}`,
    xchan_connurl: `${store.base}/poco/${nick}`,
    xchan_follow: `${store.base}/follow?f=&url=%s`,
    xchan_connpage: '',
    xchan_name: spec.name,
    xchan_network: 'zot6',
    xchan_instance_url: '',
    xchan_flags: 0,
    xchan_photo_date: created,
    xchan_name_date: created,
    xchan_hidden: spec.system ? 1 : 0,
    xchan_orphan: 0,
    xchan_censored: 0,
    xchan_selfcensored: 0,
    xchan_system: spec.system ? 1 : 0,
    xchan_pubforum: 0,
    xchan_deleted: 0,
  };
  store.xchans.push(x);
  const channelSalt = salt(`channel:${nick}`);
  const channel: ChannelRow = {
    channel_id: uid,
    channel_account_id: spec.aid,
    channel_primary: spec.primary ? 1 : 0,
    channel_name: spec.name,
    channel_address: nick,
    channel_guid: guid,
    channel_guid_sig: guidSig,
    channel_hash: hash,
    channel_portable_id: '',
    channel_timezone: 'UTC',
    channel_location: '',
    channel_theme: '',
    channel_startpage: '',
    channel_pubkey: pubkey,
    channel_prvkey: pem(`channel:${nick}`, 'PRIVATE KEY'),
    channel_notifyflags: 65535,
    channel_pageflags: spec.system ? 4096 : 0,
    channel_dirdate: created,
    channel_lastpost: created,
    channel_deleted: NULL_DATE,
    channel_active: created,
    channel_max_anon_mail: 10,
    channel_max_friend_req: 10,
    channel_expire_days: 0,
    channel_passwd_reset: '',
    channel_default_group: '',
    channel_allow_cid: '',
    channel_allow_gid: '',
    channel_deny_cid: '',
    channel_deny_gid: '',
    channel_removed: 0,
    channel_system: spec.system ? 1 : 0,
    channel_moved: '',
    channel_password: passwordHash(channelSalt, spec.accountPassword),
    channel_salt: channelSalt,
  };
  store.channels.push(channel);
  store.hublocs.push({
    hubloc_id: store.nextId('hubloc'),
    hubloc_guid: guid,
    hubloc_guid_sig: guidSig,
    hubloc_id_url: x.xchan_url,
    hubloc_hash: hash,
    hubloc_addr: x.xchan_addr,
    hubloc_network: 'zot6',
    hubloc_flags: 0,
    hubloc_status: 0,
    hubloc_url: store.base,
    hubloc_url_sig: signature(`url:${nick}`),
    hubloc_site_id: portableId('site'),
    hubloc_host: store.host,
    hubloc_callback: `${store.base}/zot`,
    hubloc_connect: '',
    hubloc_sitekey: pem('site', 'PUBLIC KEY'),
    hubloc_updated: created,
    hubloc_connected: created,
    hubloc_primary: 1,
    hubloc_orphancheck: 0,
    hubloc_error: 0,
    hubloc_deleted: 0,
  });
  if (spec.system) return channel;
  store.profiles.push({
    id: store.nextId('profile'),
    profile_guid: seededBytes(`profile:${nick}`, 32).toString('hex'),
    aid: spec.aid,
    uid,
    profile_name: 'Default Profile',
    is_default: 1,
    hide_friends: 0,
    fullname: spec.name,
    pdesc: '',
    chandesc: '',
    dob: '',
    dob_tz: '',
    address: '',
    locality: '',
    region: '',
    postal_code: '',
    country_name: '',
    hometown: '',
    gender: '',
    marital: '',
    partner: '',
    howlong: NULL_DATE,
    sexual: '',
    politic: '',
    religion: '',
    keywords: '',
    likes: '',
    dislikes: '',
    about: '',
    summary: '',
    music: '',
    book: '',
    tv: '',
    film: '',
    interest: '',
    romance: '',
    employment: '',
    education: '',
    contact: '',
    channels: '',
    homepage: '',
    photo: x.xchan_photo_l,
    thumb: x.xchan_photo_m,
    publish: 0,
    profile_vcard: '',
  });
  for (const perm of PERMISSIONS) {
    store.pconfig.push({ id: store.nextId('pconfig'), uid, cat: 'perm_limits', k: perm, v: PERM_LIMITS[perm] ?? '128', updated: created });
  }
  for (const [k, v] of [
    ['default_permcat', 'default'],
    ['permissions_role', 'social'],
    ['photo_path', '%Y-%m'],
    ['attach_path', '%Y-%m'],
  ] as const) {
    store.pconfig.push({ id: store.nextId('pconfig'), uid, cat: 'system', k, v, updated: created });
  }
  connect(store, channel, hash, { created, self: true });
  const friends = addGroup(store, channel, 'Friends', [hash]);
  channel.channel_default_group = friends.hash;
  return channel;
}

function connect(
  store: Store,
  channel: ChannelRow,
  xchan: string,
  opts: { created: string; self?: boolean; closeness?: number; pending?: boolean; feed?: boolean; archived?: boolean; myPerms?: readonly string[] },
): void {
  store.abooks.push({
    abook_id: store.nextId('abook'),
    abook_account: channel.channel_account_id,
    abook_channel: channel.channel_id,
    abook_xchan: xchan,
    abook_my_perms: 0,
    abook_their_perms: 0,
    abook_closeness: opts.self ? 0 : (opts.closeness ?? 80),
    abook_created: opts.created,
    abook_updated: opts.created,
    abook_connected: opts.self ? NULL_DATE : opts.created,
    abook_dob: NULL_DATE,
    abook_flags: 0,
    abook_blocked: 0,
    abook_ignored: 0,
    abook_hidden: 0,
    abook_archived: opts.archived ? 1 : 0,
    abook_pending: opts.pending ? 1 : 0,
    abook_unconnected: 0,
    abook_self: opts.self ? 1 : 0,
    abook_feed: opts.feed ? 1 : 0,
    abook_not_here: 0,
    abook_profile: opts.self ? '' : seededBytes(`profile-assign:${channel.channel_address}`, 32).toString('hex'),
    abook_incl: '',
    abook_excl: '',
    abook_instance: opts.self ? '' : store.base,
    abook_role: opts.self ? '' : 'social',
  });
  if (opts.myPerms) {
    for (const perm of PERMISSIONS) {
      store.abconfig.push({
        id: store.nextId('abconfig'),
        chan: channel.channel_id,
        xchan,
        cat: 'my_perms',
        k: perm,
        v: opts.myPerms.includes(perm) ? '1' : '0',
      });
    }
  }
}

function addGroup(store: Store, channel: ChannelRow, gname: string, members: readonly string[], deleted = false) {
  const group = {
    id: store.nextId('pgrp'),
    hash: uuidFor(`group:${channel.channel_address}:${gname}`),
    uid: channel.channel_id,
    visible: 0,
    deleted: deleted ? 1 : 0,
    gname,
  };
  store.groups.push(group);
  for (const xchan of members) store.groupMembers.push({ id: store.nextId('pgrp_member'), uid: channel.channel_id, gid: group.id, xchan });
  return group;
}

/** Deterministic pseudo-random bytes (xorshift32): fast enough for the 3 MB file. */
function noise(seed: number, len: number): Buffer {
  const buf = Buffer.alloc(len + 3);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < len; i += 4) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    buf.writeUInt32LE(x, i);
  }
  return buf.subarray(0, len);
}

/** Size of `big-dataset.bin`: larger than several filedata chunks. */
export const BIG_FILE_SIZE = 3 * 1024 * 1024;
let bigFile: Buffer | undefined;
/** The 3 MB file's bytes (built once per process, never mutated). */
function bigFileBytes(): Buffer {
  bigFile ??= noise(0x5eed, BIG_FILE_SIZE);
  return bigFile;
}

function reportPdf(): Buffer {
  const head = Buffer.from('%PDF-1.4\n% duograph sandbox demo report\n', 'latin1');
  const tail = Buffer.from('\n%%EOF\n', 'latin1');
  return Buffer.concat([head, noise(0x9df, 20_000 - head.length - tail.length), tail]);
}

const THREAD_TOPICS = [
  'Welcome to the duograph sandbox! This channel is seeded with demo data for the #graphql gateway.',
  'Sandbox notes: every start is seeded from scratch, ids and timestamps are fixed.',
  'Reading list for the week: the Zot protocol docs and the #hubzilla API pages.',
  'First release candidate of duograph is out. Feedback welcome.',
  'Alice here: dropping a note on your wall about the schema review.',
  'Release notes draft: connections, files, albums and privacy groups are in.',
  'Posted from the command line client.',
  'Attaching the meeting notes and the quarterly report.',
  'Announcement only: comments are closed on this one.',
  'Thanks @[zrl=https://hub.duograph.test/channel/alice]Alice Example[/zrl] for the review of the item encoder.',
  'Greetings from Lisbon, the offsite is going well.',
  'Bob on your wall: the federation tests pass on my hub too.',
  'Travel plans for the next meetup.',
  'Work group only: planning the Q4 roadmap.',
  '## Markdown post\n\nThis one is written in *markdown*.',
  'Vote: should the gateway expose raw activity objects? Agree or disagree.',
  'Pinned: how to reach the team.',
  'Weekly update: #duograph pagination is thread-based on network/stream.',
  'Carol on your wall: shared album is up.',
  'Just for Alice: the draft of the talk.',
  'Filedata chunks are base64, reassemble them in order.',
  'The big dataset for the load tests is attached.',
  'Privacy groups now map to PrivacyGroup in the schema.',
  'xchan lookups work by address, hash or guid.',
  'This post expires at the start of 2027.',
  'Alice again: can we pair on the export stripping?',
  'Release 0.2 is tagged. #graphql #hubzilla',
  'Photos from the offsite are in the Lisbon album.',
  'Reminder: the session cookie must never be stored by the gateway.',
  'Last post before the freeze. Thanks everyone!',
];

const COMMENT_TEXTS = [
  'Looks great!',
  'Thanks for sharing.',
  'Agreed, let us ship it.',
  'I left a few notes on this.',
  'Can we discuss this on Friday?',
  'Nice work.',
  '+1 from me.',
  'Interesting, tell me more.',
];

/** Ids and hashes a gateway test can rely on (filled by `seedStore`; identical on every start). */
export interface SeedFacts {
  demoXchan: string;
  aliceXchan: string;
  bobXchan: string;
  graceXchan: string;
  wallThreadIds: number[];
  networkThreadIds: number[];
  files: Record<string, string>;
  folders: Record<string, string>;
  groups: Record<string, { id: number; hash: string }>;
}

interface ItemSpec {
  created: string;
  author: string;
  owner: string;
  wall: boolean;
  parent?: ItemSpec;
  remoteBase?: string;
  fields: Partial<ItemRow>;
  categories?: string[];
  hashtags?: string[];
  mention?: { name: string; url: string };
  row?: ItemRow;
}

/** Options of `seedStore`; every one defaults to the demo data above alone. */
export interface SeedOptions {
  /** Extra small text files in folder `Bulk` of channel demo, for file-listing load tests; default 0. */
  bulkFiles?: number;
  /** The release the hub plays; default 8.8. */
  version?: HubzillaVersion;
}

/**
 * When the 10.x hub of the seed was upgraded from 8.8: items created since
 * carry the new vocabulary and their `Add` items, older ones keep the 8.8
 * URIs, so one stream mixes both, as on a real upgraded hub.
 */
export const UPGRADED_AT = '2026-11-01 00:00:00';

/** Hubzilla 10's additions to a seeded 8.8 store: keys, refreshed xchans, new items' vocabulary and their `Add` items. */
function upgradeTo10(store: Store): void {
  for (const c of store.channels) {
    c.channel_epubkey = base64Key(`epub:${c.channel_address}`);
    // A sentinel, so that a test can tell it never leaves the gateway.
    c.channel_eprvkey = `SENTINEL-eprvkey-${c.channel_address}-${base64Key(`eprv:${c.channel_address}`)}`;
  }
  for (const x of store.xchans) {
    x.xchan_epubkey = base64Key(`epub:${x.xchan_hash}`);
    x.xchan_updated = x.xchan_name_date;
  }
  for (const c of store.channels) {
    const upgraded = store.items.filter((i) => i.uid === c.channel_id && i.created >= UPGRADED_AT && i.item_type === 0 && i.item_hidden === 0);
    for (const item of upgraded) {
      item.verb = 'Create';
      item.obj_type = 'Note';
      if (needsAddItem(store, item, c.channel_hash)) storeAddItem(store, item, c.channel_address);
    }
  }
}

/** A 32-byte key as base64, as sodium keys are stored. */
function base64Key(seed: string): string {
  return seededBytes(`key:${seed}`, 32).toString('base64');
}

/** Builds a freshly seeded store (see the file comment for what it holds). */
export function seedStore(options: SeedOptions = {}): { store: Store; facts: SeedFacts } {
  const store = new Store(options.version ?? '8.8');
  const t0 = '2026-08-20 08:00:00';
  store.accounts.push(
    {
      account_id: 1,
      email: 'demo@example.com',
      password: 'demo-pass',
      salt: salt('acct:1'),
      password_hash: passwordHash(salt('acct:1'), 'demo-pass'),
      default_channel: 2,
    },
    {
      account_id: 2,
      email: 'alice@example.com',
      password: 'alice-pass',
      salt: salt('acct:2'),
      password_hash: passwordHash(salt('acct:2'), 'alice-pass'),
      default_channel: 4,
    },
    {
      account_id: 3,
      email: COLON_ACCOUNT.email,
      password: COLON_ACCOUNT.password,
      salt: salt('acct:3'),
      password_hash: passwordHash(salt('acct:3'), COLON_ACCOUNT.password),
      default_channel: 5,
    },
  );
  localChannel(store, { uid: 1, aid: 0, nick: 'sys', name: 'System', primary: true, created: '2026-08-01 00:00:00', accountPassword: '', system: true });
  const demo = localChannel(store, { uid: 2, aid: 1, nick: 'demo', name: 'Demo Channel', primary: true, created: t0, accountPassword: 'demo-pass' });
  const projects = localChannel(store, {
    uid: 3,
    aid: 1,
    nick: 'demo-projects',
    name: 'Demo Projects',
    primary: false,
    created: addSeconds(t0, 600),
    accountPassword: 'demo-pass',
  });
  const alice = localChannel(store, {
    uid: 4,
    aid: 2,
    nick: 'alice',
    name: 'Alice Example',
    primary: true,
    created: addSeconds(t0, 3600),
    accountPassword: 'alice-pass',
  });
  localChannel(store, {
    uid: 5,
    aid: 3,
    nick: 'colontest',
    name: 'Colon Test',
    primary: true,
    created: addSeconds(t0, 7200),
    accountPassword: COLON_ACCOUNT.password,
  });
  store.oauthClients.push({ client_id: OAUTH_CLIENT.clientId, client_secret: OAUTH_CLIENT.clientSecret, user_id: demo.channel_id });

  const bob = remoteXchan(store, 'bob@social.example.org', 'Bob Builder', 'zot6', t0);
  const carol = remoteXchan(store, 'carol@hub.example.com', 'Carol Danvers', 'zot6', t0);
  const dave = remoteXchan(store, 'dave@mastodon.example', 'Dave Lister', 'activitypub', t0);
  const erin = remoteXchan(store, 'erin@friendica.example', 'Erin Brockovich', 'zot6', t0);
  const frank = remoteXchan(store, 'frank@feeds.example', 'Frank Feed', 'rss', t0);
  const grace = remoteXchan(store, 'grace@hub.example.com', 'Grace Hopper', 'zot6', t0);
  const aliceX = store.selfXchan(alice);
  const demoX = store.selfXchan(demo);

  const views = ['view_stream', 'view_profile', 'view_contacts', 'view_storage', 'view_pages', 'view_wiki'];
  const connected = '2026-08-21 09:00:00';
  connect(store, demo, aliceX.xchan_hash, {
    created: connected,
    closeness: 10,
    myPerms: [...views, 'send_stream', 'post_wall', 'post_comments', 'post_like', 'post_mail', 'chat'],
  });
  connect(store, demo, bob.xchan_hash, {
    created: addSeconds(connected, 3600),
    closeness: 40,
    myPerms: [...views, 'send_stream', 'post_comments', 'post_like'],
  });
  connect(store, demo, carol.xchan_hash, {
    created: addSeconds(connected, 7200),
    closeness: 60,
    myPerms: [...views, 'send_stream', 'post_comments', 'write_storage'],
  });
  connect(store, demo, dave.xchan_hash, {
    created: addSeconds(connected, 10800),
    closeness: 80,
    myPerms: ['view_stream', 'view_profile', 'send_stream', 'post_comments'],
  });
  connect(store, demo, erin.xchan_hash, { created: addSeconds(connected, 14400), closeness: 99, pending: true, myPerms: [] });
  connect(store, demo, frank.xchan_hash, { created: addSeconds(connected, 18000), closeness: 99, feed: true, archived: true, myPerms: ['view_stream'] });
  connect(store, projects, demoX.xchan_hash, { created: connected, closeness: 20, myPerms: [...views, 'post_comments'] });
  connect(store, alice, demoX.xchan_hash, { created: connected, closeness: 10, myPerms: [...views, 'send_stream', 'post_wall', 'post_comments', 'post_like'] });
  for (const perm of PERMISSIONS) {
    store.abconfig.push({
      id: store.nextId('abconfig'),
      chan: demo.channel_id,
      xchan: aliceX.xchan_hash,
      cat: 'their_perms',
      k: perm,
      v: views.includes(perm) || perm === 'post_comments' ? '1' : '0',
    });
  }

  const friends = store.groups.find((g) => g.uid === demo.channel_id && g.gname === 'Friends');
  if (friends) {
    for (const x of [aliceX.xchan_hash, bob.xchan_hash])
      store.groupMembers.push({ id: store.nextId('pgrp_member'), uid: demo.channel_id, gid: friends.id, xchan: x });
  }
  const work = addGroup(store, demo, 'Work', [aliceX.xchan_hash, carol.xchan_hash, dave.xchan_hash]);
  const family = addGroup(store, demo, 'Family', [erin.xchan_hash, grace.xchan_hash]);
  const archive = addGroup(store, demo, 'Archive', [frank.xchan_hash], true);
  // A group without members: the hub delivers an item for it to every connection (delivery.ts).
  const empty = addGroup(store, demo, 'Empty', []);
  const aliceFriends = store.groups.find((g) => g.uid === alice.channel_id && g.gname === 'Friends');
  if (aliceFriends) store.groupMembers.push({ id: store.nextId('pgrp_member'), uid: alice.channel_id, gid: aliceFriends.id, xchan: demoX.xchan_hash });

  // Files of demo (photos come after the items).
  const docs = ensureFolder(store, demo, 'Documents', '2026-09-02 10:00:00');
  const notes = storeFile(store, demo, docs, {
    filename: 'notes.txt',
    filetype: 'text/plain',
    data: Buffer.from('Meeting notes\n- ship the Hubzilla sandbox\n- strip secrets from exports\n- stream files in chunks\n'),
    created: '2026-09-02 10:00:01',
  });
  const readme = storeFile(store, demo, docs, {
    filename: 'readme.md',
    filetype: 'text/markdown',
    data: Buffer.from('# Documents\n\nShared documents of the demo channel. Ünïcödé is fine too.\n'),
    created: '2026-09-02 10:05:00',
  });
  const report = storeFile(store, demo, docs, { filename: 'report.pdf', filetype: 'application/pdf', data: reportPdf(), created: '2026-09-15 16:30:00' });
  const projectFolder = ensureFolder(store, demo, 'Projects/duograph', '2026-10-01 09:00:00');
  const projectsRoot = store.attach.find((a) => a.uid === demo.channel_id && a.display_path === 'Projects') as AttachRow;
  const config = storeFile(store, demo, projectFolder, {
    filename: 'config.json',
    filetype: 'application/json',
    data: Buffer.from(`${JSON.stringify({ name: 'duograph', upstreams: ['gitlab', 'hubzilla'], sandbox: true }, null, 2)}\n`),
    created: '2026-10-01 09:00:01',
  });
  const big = storeFile(store, demo, projectFolder, {
    filename: 'big-dataset.bin',
    filetype: 'application/octet-stream',
    data: bigFileBytes(),
    created: '2026-10-20 14:00:00',
  });

  // Items of demo: 30 wall threads with 30 comments, 8 network threads with 4 comments.
  const specs: ItemSpec[] = [];
  const hours = (h: number): number => h * 3600;
  const start = '2026-09-01 09:00:00';
  const wallAuthors: Record<number, string> = { 4: aliceX.xchan_hash, 11: bob.xchan_hash, 18: carol.xchan_hash, 25: aliceX.xchan_hash };
  const commenters = [aliceX.xchan_hash, bob.xchan_hash, carol.xchan_hash, demoX.xchan_hash, dave.xchan_hash];
  let commentNo = 0;
  const threads: ItemSpec[] = [];
  for (let i = 0; i < 30; i++) {
    const created = addSeconds(start, hours(64 * i));
    const topic = THREAD_TOPICS[i] ?? `Post ${i + 1}`;
    const spec: ItemSpec = { created, author: wallAuthors[i] ?? demoX.xchan_hash, owner: demoX.xchan_hash, wall: true, fields: { body: topic } };
    const hashtags = [...topic.matchAll(/#(\w+)/g)].map((m) => m[1] ?? '');
    if (hashtags.length > 0) spec.hashtags = hashtags;
    if (i === 1) spec.fields = { ...spec.fields, title: 'Sandbox notes (updated)', edited: addSeconds(created, hours(2)) };
    if (i === 2 || i === 16) spec.fields.item_starred = 1;
    if (i === 5 || i === 21) spec.categories = i === 5 ? ['duograph', 'release'] : ['duograph'];
    if (i === 26) spec.categories = ['release'];
    if (i === 12) spec.categories = ['travel'];
    if (i === 3) spec.fields.title = 'duograph 0.1.0-rc1';
    if (i === 6) spec.fields.app = 'duograph-cli';
    if (i === 7) {
      spec.fields.attach = JSON.stringify(
        [notes, report].map((f) => ({ href: `${store.base}/attach/${f.hash}`, length: f.filesize, type: f.filetype, title: f.filename, revision: 0 })),
      );
    }
    if (i === 21) {
      spec.fields.attach = JSON.stringify([
        { href: `${store.base}/attach/${big.hash}`, length: big.filesize, type: big.filetype, title: big.filename, revision: 0 },
      ]);
    }
    if (i === 8) spec.fields = { ...spec.fields, item_nocomment: 1, comments_closed: created };
    if (i === 9) spec.mention = { name: 'Alice Example', url: aliceX.xchan_url };
    if (i === 10) spec.fields = { ...spec.fields, location: 'Lisbon, Portugal', coord: '38.7223 -9.1393' };
    if (i === 13) spec.fields = { ...spec.fields, allow_gid: `<${work.hash}>`, item_private: 1, title: 'Q4 roadmap' };
    if (i === 14) spec.fields.mimetype = 'text/markdown';
    if (i === 15) spec.fields.item_consensus = 1;
    if (i === 19) spec.fields = { ...spec.fields, allow_cid: `<${aliceX.xchan_hash}>`, item_private: 1 };
    if (i === 24) spec.fields.expires = '2027-01-01 00:00:00';
    specs.push(spec);
    threads.push(spec);
    const count = i === 8 ? 0 : i % 3 === 0 ? 2 : i % 3 === 1 ? 1 : 0;
    for (let k = 0; k < count; k++) {
      // The second comment on the first thread is recent: it pulls that old thread into the default channel/stream window.
      const commentCreated = i === 0 && k === 1 ? '2026-11-15 10:00:00' : addSeconds(created, hours(3 * (k + 1)));
      specs.push({
        created: commentCreated,
        author: commenters[commentNo % commenters.length] ?? demoX.xchan_hash,
        owner: demoX.xchan_hash,
        wall: true,
        parent: spec,
        fields: { body: COMMENT_TEXTS[commentNo % COMMENT_TEXTS.length] ?? 'ok' },
      });
      commentNo++;
    }
  }
  const networkAuthors = [bob, carol, dave, erin, bob, carol, dave, erin];
  const networkThreads: ItemSpec[] = [];
  networkAuthors.forEach((author, n) => {
    const spec: ItemSpec = {
      created: addSeconds('2026-09-10 06:00:00', hours(24 * 9 * n)),
      author: author.xchan_hash,
      owner: author.xchan_hash,
      wall: false,
      remoteBase: author.xchan_url.replace(/\/(channel|users)\/.*$/, ''),
      fields: { body: `${author.xchan_name} shares update #${n + 1} from ${author.xchan_addr.split('@')[1] ?? 'afar'}.`, item_origin: 0 },
    };
    specs.push(spec);
    networkThreads.push(spec);
  });
  // A dozen threads in one second (a bulk import, a relay catching up): ties in created and commented that
  // the hub's SQL orders differently for each page it is asked for (items.ts).
  const burstAuthors = [demoX, bob, demoX, carol, dave, demoX, erin, bob, demoX, carol, demoX, dave];
  burstAuthors.forEach((author, n) => {
    const own = author === demoX;
    specs.push({
      created: '2026-11-18 09:30:00',
      author: author.xchan_hash,
      owner: author.xchan_hash,
      wall: own,
      remoteBase: own ? undefined : author.xchan_url.replace(/\/(channel|users)\/.*$/, ''),
      fields: { body: `Burst ${n + 1} of 12, all in one second.`, item_origin: own ? 1 : 0 },
    });
  });
  for (const [n, who] of [
    [1, demoX],
    [3, aliceX],
    [5, demoX],
    [6, bob],
  ] as const) {
    const parent = networkThreads[n];
    if (!parent) continue;
    specs.push({
      created: addSeconds(parent.created, hours(7)),
      author: who.xchan_hash,
      owner: parent.owner,
      wall: false,
      parent,
      remoteBase: who === demoX ? undefined : parent.remoteBase,
      fields: { body: COMMENT_TEXTS[(n + 3) % COMMENT_TEXTS.length] ?? 'ok', item_origin: who === demoX ? 1 : 0 },
    });
  }

  specs.sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : 0));
  for (const spec of specs) {
    const id = store.nextId('item');
    const uuid = uuidFor(`seed-item:${demo.channel_address}:${id}`);
    const mid = spec.remoteBase ? `${spec.remoteBase}/item/${uuid}` : store.localMid(uuid);
    const thread = spec.parent?.row;
    const row = store.insertItem({
      id,
      uuid,
      mid,
      uid: demo.channel_id,
      aid: demo.channel_account_id,
      owner_xchan: spec.owner,
      author_xchan: spec.author,
      created: spec.created,
      parent: thread?.id ?? id,
      parent_mid: thread?.mid ?? mid,
      thr_parent: thread?.mid ?? mid,
      obj_type: thread ? 'http://activitystrea.ms/schema/1.0/comment' : 'http://activitystrea.ms/schema/1.0/note',
      sig: signature(`item:${uuid}`),
      item_wall: spec.wall ? 1 : 0,
      item_thread_top: thread ? 0 : 1,
      ...(spec.remoteBase && !thread ? { plink: mid } : {}),
      ...(thread ? { allow_cid: thread.allow_cid, allow_gid: thread.allow_gid, item_private: thread.item_private } : {}),
      ...spec.fields,
    });
    if (spec.fields.edited === undefined) row.edited = row.created;
    if (thread) {
      if (row.created > thread.commented) thread.commented = row.created;
      if (row.created > thread.changed) thread.changed = row.created;
      thread.item_retained = 1;
    }
    spec.row = row;
    for (const tag of spec.hashtags ?? []) {
      row.body = row.body.replace(`#${tag}`, `#[zrl=${store.base}/search?tag=${tag}]${tag}[/zrl]`);
      store.addTerm(row, TERM_HASHTAG, tag, `${store.base}/search?tag=${tag}`);
    }
    for (const cat of spec.categories ?? []) store.addTerm(row, TERM_CATEGORY, cat, `${store.base}/channel/${demo.channel_address}?f=&cat=${cat}`);
    if (spec.mention) store.addTerm(row, TERM_MENTION, spec.mention.name, spec.mention.url);
    if (row.edited > row.changed) row.changed = row.edited;
  }
  for (const spec of specs) if (spec.row && spec.row.comments_closed !== NULL_DATE) spec.row.comments_closed = spec.row.created;

  // Photos of demo (each adds scales 0-3 and a hidden item).
  const photoSpecs = [
    { album: '2026-10', filename: 'sunrise.png', rgb: [250, 160, 60], created: '2026-10-05 07:12:00', title: 'Sunrise over the river' },
    { album: '2026-10', filename: 'harbour.png', rgb: [40, 110, 200], created: '2026-10-12 18:40:00', title: '' },
    { album: '2026-11', filename: 'team.png', rgb: [90, 200, 120], created: '2026-11-03 12:00:00', title: 'The team' },
    { album: "Lisbon offsite: the team's best shots", filename: 'tram.png', rgb: [240, 210, 40], created: '2026-11-12 15:20:00', title: 'Tram 28' },
    { album: "Lisbon offsite: the team's best shots", filename: 'castle.png', rgb: [160, 90, 60], created: '2026-11-12 16:05:00', title: '' },
  ] as const;
  const photoHashes: Record<string, string> = {};
  for (const p of photoSpecs) {
    const data = makePng(64, 48, p.rgb);
    const scaled = [data, makePng(64, 48, p.rgb, 1), makePng(64, 48, p.rgb, 1), makePng(64, 48, p.rgb, 1)];
    const { attach } = storePhoto(store, demo, {
      album: p.album,
      filename: p.filename,
      mimetype: 'image/png',
      data,
      width: 64,
      height: 48,
      created: p.created,
      title: p.title,
      scaled,
    });
    photoHashes[p.filename] = attach.hash;
  }

  // demo-projects and alice: a little content each.
  const projectX = store.selfXchan(projects);
  ['Project kickoff: gateway over two upstreams.', 'Milestone 1: GitLab projects and jobs.', 'Milestone 2: Hubzilla channel data.'].forEach((body, n) => {
    const id = store.nextId('item');
    const uuid = uuidFor(`seed-item:${projects.channel_address}:${id}`);
    store.insertItem({
      id,
      uuid,
      uid: projects.channel_id,
      aid: projects.channel_account_id,
      owner_xchan: projectX.xchan_hash,
      author_xchan: projectX.xchan_hash,
      created: addSeconds('2026-11-10 09:00:00', hours(24 * n)),
      body,
      sig: signature(`item:${uuid}`),
    });
  });
  ['Hello from Alice.', 'Reviewing the duograph schema today.'].forEach((body, n) => {
    const id = store.nextId('item');
    const uuid = uuidFor(`seed-item:${alice.channel_address}:${id}`);
    store.insertItem({
      id,
      uuid,
      uid: alice.channel_id,
      aid: alice.channel_account_id,
      owner_xchan: aliceX.xchan_hash,
      author_xchan: aliceX.xchan_hash,
      created: addSeconds('2026-11-12 11:00:00', hours(30 * n)),
      body,
      sig: signature(`item:${uuid}`),
    });
  });
  storeFile(store, alice, undefined, {
    filename: 'alice-notes.txt',
    filetype: 'text/plain',
    data: Buffer.from("Alice's private notes.\n"),
    created: '2026-11-12 11:30:00',
  });
  for (const c of [demo, projects, alice]) {
    // Hub dates are 'YYYY-MM-DD HH:MM:SS' strings: they order as text.
    for (const item of store.items) {
      if (item.uid === c.channel_id && item.item_wall === 1 && item.created > c.channel_lastpost) c.channel_lastpost = item.created;
    }
  }
  const bulkFiles = options.bulkFiles ?? 0;
  if (bulkFiles > 0) {
    const folder = ensureFolder(store, demo, 'Bulk', '2026-11-20 08:00:00');
    for (let i = 1; i <= bulkFiles; i++) {
      storeFile(store, demo, folder, {
        filename: `bulk-${String(i).padStart(4, '0')}.txt`,
        filetype: 'text/plain',
        data: Buffer.from(`Bulk file ${i} of the demo channel.\n`),
        // Five to a second: ties in `created`, as an upload of a whole folder makes.
        created: addSeconds('2026-11-20 08:00:00', Math.ceil(i / 5)),
      });
    }
  }
  if (store.version === '10') upgradeTo10(store);

  const facts: SeedFacts = {
    demoXchan: demoX.xchan_hash,
    aliceXchan: aliceX.xchan_hash,
    bobXchan: bob.xchan_hash,
    graceXchan: grace.xchan_hash,
    wallThreadIds: threads.map((t) => t.row?.id ?? 0),
    networkThreadIds: networkThreads.map((t) => t.row?.id ?? 0),
    files: {
      'notes.txt': notes.hash,
      'readme.md': readme.hash,
      'report.pdf': report.hash,
      'config.json': config.hash,
      'big-dataset.bin': big.hash,
      ...photoHashes,
    },
    folders: { Documents: docs.hash, Projects: projectsRoot.hash, 'Projects/duograph': projectFolder.hash },
    groups: {
      Friends: { id: friends?.id ?? 0, hash: friends?.hash ?? '' },
      Work: { id: work.id, hash: work.hash },
      Family: { id: family.id, hash: family.hash },
      Archive: { id: archive.id, hash: archive.hash },
      Empty: { id: empty.id, hash: empty.hash },
    },
  };
  return { store, facts };
}

let cachedFacts: SeedFacts | undefined;
/** The seed's ids and hashes (the same on every start), for tests that need them. */
export function seedFacts(): SeedFacts {
  cachedFacts ??= seedStore().facts;
  return cachedFacts;
}
