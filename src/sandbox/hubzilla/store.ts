/**
 * The sandbox's in-memory database: one per started sandbox, seeded fresh.
 * Ids come from per-table sequences like MariaDB auto-increment columns, so a
 * new post gets the next item id exactly as on the real hub.
 */
import { LogicalClock, NULL_DATE } from './dates.js';
import { base64url, uuidFor } from './identifiers.js';
import type { HubzillaVersion } from './versions.js';
import type {
  AbconfigRow,
  AbookRow,
  AccountRecord,
  AttachRow,
  ChannelRow,
  GroupMemberRow,
  GroupRow,
  HublocRow,
  ItemRow,
  OAuthClientRecord,
  PconfigRow,
  PhotoRow,
  ProfileRow,
  TermRow,
  XchanRow,
} from './records.js';

/**
 * The hub's own base URL as it appears inside records (mids, permalinks, photo
 * URLs). Fixed rather than the listening address so that seed data is identical
 * whatever port the sandbox gets; the sandbox serves only the API itself.
 */
export const HUB_BASE = 'https://hub.duograph.test';
export const HUB_HOST = 'hub.duograph.test';

type Table = 'item' | 'attach' | 'photo' | 'pgrp' | 'pgrp_member' | 'abook' | 'abconfig' | 'pconfig' | 'term' | 'hubloc' | 'profile';

export class Store {
  readonly base = HUB_BASE;
  /** The release this hub plays (versions.ts). */
  constructor(readonly version: HubzillaVersion = '8.8') {}

  readonly host = HUB_HOST;
  readonly clock = new LogicalClock();

  readonly accounts: AccountRecord[] = [];
  readonly channels: ChannelRow[] = [];
  readonly xchans: XchanRow[] = [];
  readonly hublocs: HublocRow[] = [];
  readonly profiles: ProfileRow[] = [];
  readonly abooks: AbookRow[] = [];
  readonly abconfig: AbconfigRow[] = [];
  readonly pconfig: PconfigRow[] = [];
  readonly groups: GroupRow[] = [];
  readonly groupMembers: GroupMemberRow[] = [];
  readonly items: ItemRow[] = [];
  readonly terms: TermRow[] = [];
  readonly attach: AttachRow[] = [];
  /** File bytes by attach hash (os_storage=1 files live on disk on the real hub). */
  readonly fileData = new Map<string, Buffer>();
  readonly photos: PhotoRow[] = [];
  /** Image bytes by photo row id. */
  readonly photoData = new Map<number, Buffer>();
  readonly oauthClients: OAuthClientRecord[] = [];
  /** Issued OAuth2 access tokens: token -> channel id and expiry (ms since epoch). */
  readonly oauthTokens = new Map<string, { uid: number; expires: number }>();
  /** `namespace` + `remote_id` -> item id (the real iconfig mapping of item/update). */
  readonly remoteIds = new Map<string, number>();

  private readonly sequences = new Map<Table, number>();

  /** The next auto-increment id of a table. */
  nextId(table: Table): number {
    const id = (this.sequences.get(table) ?? 0) + 1;
    this.sequences.set(table, id);
    return id;
  }

  /** The id nextId() would give now, without taking it. */
  nextIdPeek(table: Table): number {
    return (this.sequences.get(table) ?? 0) + 1;
  }

  /** Makes the next id of `table` at least `id` + 1 (for rows seeded with explicit ids). */
  reserveId(table: Table, id: number): void {
    if ((this.sequences.get(table) ?? 0) < id) this.sequences.set(table, id);
  }

  channelByNick(nick: string): ChannelRow | undefined {
    return this.channels.find((c) => c.channel_address === nick && c.channel_removed === 0);
  }

  channelById(uid: number): ChannelRow | undefined {
    return this.channels.find((c) => c.channel_id === uid);
  }

  accountById(id: number): AccountRecord | undefined {
    return this.accounts.find((a) => a.account_id === id);
  }

  accountByEmail(email: string): AccountRecord | undefined {
    const e = email.toLowerCase();
    return this.accounts.find((a) => a.email.toLowerCase() === e);
  }

  xchan(hash: string): XchanRow | undefined {
    return this.xchans.find((x) => x.xchan_hash === hash);
  }

  /** The channel's own xchan (every channel has one). */
  selfXchan(channel: ChannelRow): XchanRow {
    const x = this.xchan(channel.channel_hash);
    if (!x) throw new Error(`channel ${channel.channel_address} has no xchan`);
    return x;
  }

  itemById(id: number): ItemRow | undefined {
    return this.items.find((i) => i.id === id);
  }

  termsOf(item: ItemRow): TermRow[] {
    return this.terms.filter((t) => t.oid === item.id && t.otype === 1);
  }

  pconfigValue(uid: number, cat: string, k: string): string | undefined {
    return this.pconfig.find((p) => p.uid === uid && p.cat === cat && p.k === k)?.v;
  }

  /** A local item's message id: `<base>/item/<uuid>`. */
  localMid(uuid: string): string {
    return `${this.base}/item/${uuid}`;
  }

  /** The local display link of any item: `<base>/display/b64.<base64url(mid)>`. */
  displayLink(mid: string): string {
    return `${this.base}/display/b64.${base64url(mid)}`;
  }

  /** Inserts an item; everything not given takes the value a fresh local post has. */
  insertItem(fields: Partial<ItemRow> & Pick<ItemRow, 'uid' | 'aid' | 'owner_xchan' | 'author_xchan' | 'created'>): ItemRow {
    const id = fields.id ?? this.nextId('item');
    this.reserveId('item', id);
    const uuid = fields.uuid ?? uuidFor(`item:${id}`);
    const mid = fields.mid ?? this.localMid(uuid);
    const row: ItemRow = {
      id,
      uuid,
      mid,
      aid: fields.aid,
      uid: fields.uid,
      parent: id,
      parent_mid: mid,
      thr_parent: mid,
      created: fields.created,
      edited: fields.created,
      expires: NULL_DATE,
      commented: fields.created,
      received: fields.created,
      changed: fields.created,
      comments_closed: NULL_DATE,
      owner_xchan: fields.owner_xchan,
      author_xchan: fields.author_xchan,
      source_xchan: '',
      mimetype: 'text/bbcode',
      title: '',
      summary: '',
      body: '',
      html: '',
      app: '',
      lang: '',
      revision: 0,
      verb: 'http://activitystrea.ms/schema/1.0/post',
      obj_type: 'http://activitystrea.ms/schema/1.0/note',
      obj: '',
      tgt_type: '',
      target: '',
      layout_mid: '',
      postopts: '',
      route: '',
      llink: this.displayLink(mid),
      plink: mid,
      resource_id: '',
      resource_type: '',
      attach: '',
      sig: '',
      location: '',
      coord: '',
      public_policy: '',
      comment_policy: 'contacts',
      allow_cid: '',
      allow_gid: '',
      deny_cid: '',
      deny_gid: '',
      item_restrict: 0,
      item_flags: 0,
      item_private: 0,
      item_origin: 1,
      item_unseen: 0,
      item_starred: 0,
      item_uplink: 0,
      item_consensus: 0,
      item_wall: 1,
      item_thread_top: 1,
      item_notshown: 0,
      item_nsfw: 0,
      item_relay: 0,
      item_mentionsme: 0,
      item_nocomment: 0,
      item_obscured: 0,
      item_verified: 1,
      item_retained: 0,
      item_rss: 0,
      item_deleted: 0,
      item_type: 0,
      item_hidden: 0,
      item_unpublished: 0,
      item_delayed: 0,
      item_pending_remove: 0,
      item_blocked: 0,
    };
    // Re-apply the caller's fields over the defaults, keeping the column order above.
    for (const key of Object.keys(row) as (keyof ItemRow)[]) {
      const v = fields[key];
      if (v !== undefined) (row as unknown as Record<string, unknown>)[key] = v;
    }
    if (fields.llink === undefined) row.llink = this.displayLink(row.mid);
    if (fields.plink === undefined) row.plink = row.item_thread_top ? row.mid : row.llink;
    this.items.push(row);
    return row;
  }

  addTerm(item: ItemRow, ttype: number, term: string, url: string): TermRow {
    const row: TermRow = { tid: this.nextId('term'), uid: item.uid, oid: item.id, otype: 1, ttype, term, url };
    this.terms.push(row);
    return row;
  }

  removeTerms(item: ItemRow): void {
    for (let i = this.terms.length - 1; i >= 0; i--) {
      const t = this.terms[i];
      if (t && t.oid === item.id && t.otype === 1) this.terms.splice(i, 1);
    }
  }
}
