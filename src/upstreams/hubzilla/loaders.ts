/**
 * Per-request DataLoaders over the Hubzilla client. Created once per GraphQL
 * request: never shared across requests or callers. Hubzilla has no batch
 * reads, so what they buy is that no key is fetched twice in one request
 * (50 items by 3 authors cost at most 3 xchan lookups), that every lookup
 * asked in the same tick is issued together, and that lists prime lookups.
 */
import { eachSettled } from '../batch.js';
import DataLoader from 'dataloader';
import { knownCreator, rememberCreator } from './creators.js';
import { checkXchanValue, type HubzillaClient, type XchanKey } from './client.js';
import type {
  AlbumRecord,
  ChannelInfo,
  ConnectionRecord,
  ConnectionSettingRecord,
  FileExportRecord,
  FileRecord,
  GroupMemberRecord,
  GroupRecord,
  ItemRecord,
  PhotoRecord,
  XchanRecord,
} from './records.js';

function memo<T>(load: () => Promise<T>): () => Promise<T> {
  let promise: Promise<T> | undefined;
  return () => (promise ??= load());
}

/** The loaders of one channel (the login's default one, or one picked with `channel=`). */
export class ChannelLoaders {
  /** The channel's public fields (verify); null when the hub refuses the channel. */
  readonly info: () => Promise<ChannelInfo | null>;
  readonly groups: () => Promise<GroupRecord[]>;
  readonly connections: () => Promise<ConnectionRecord[]>;
  readonly albums: () => Promise<AlbumRecord[]>;
  /** Every photo of the channel in one call, grouped by album by the caller. */
  readonly photos: () => Promise<PhotoRecord[]>;
  /** Every connection's abconfig rows in one call, by xchan hash. */
  readonly connectionSettings: () => Promise<Map<string, ConnectionSettingRecord[]>>;
  private readonly groupMembers: DataLoader<number, GroupMemberRecord[] | null>;
  private readonly groupMembersByName: DataLoader<string, GroupMemberRecord[] | null>;
  private readonly allowedByConnection: DataLoader<number, Map<string, boolean> | null>;
  private readonly fileExports: DataLoader<string, FileExportRecord | null>;
  private readonly threads: DataLoader<string, ItemRecord[] | null>;
  private readonly files: DataLoader<string, FileRecord | null>;
  private readonly streams = new Map<string, Promise<ChannelStream>>();

  constructor(readonly client: HubzillaClient) {
    this.info = memo(() => client.getChannel());
    this.groups = memo(() => client.listGroups());
    this.connections = memo(() => client.listConnections());
    this.albums = memo(() => client.listAlbums());
    this.photos = memo(() => client.listPhotos(null));
    this.connectionSettings = memo(async () => {
      const byXchan = new Map<string, ConnectionSettingRecord[]>();
      for (const row of await client.listConnectionSettings()) byXchan.set(row.xchan, [...(byXchan.get(row.xchan) ?? []), row]);
      return byXchan;
    });
    // group_members takes one group per call: a batch is one call per distinct group, all sent at once.
    this.groupMembers = new DataLoader((ids) => eachSettled(ids.map((id) => client.listGroupMembers(id))));
    this.groupMembersByName = new DataLoader((names) => eachSettled(names.map((name) => client.listGroupMembersByName(name))));
    this.allowedByConnection = new DataLoader((ids) => eachSettled(ids.map((id) => client.allowedPermissions({ abook_id: id }))));
    this.fileExports = new DataLoader((hashes) =>
      eachSettled(
        hashes.map(async (hash) => {
          const exported = await client.exportFile(hash);
          // Each row is the whole attach record, creator included: later lookups of them cost nothing.
          for (const record of exported?.attach ?? []) {
            this.files.prime(record.hash, record);
            if (record.creator) this.rememberCreator(record);
          }
          return exported;
        }),
      ),
    );
    this.threads = new DataLoader((keys) =>
      eachSettled(keys.map((key) => client.getItemThread(key.startsWith('id:') ? { item_id: Number(key.slice(3)) } : { mid: key.slice(4) }))),
    );
    this.files = new DataLoader((hashes) =>
      eachSettled(
        hashes.map(async (hash) => {
          const record = await client.getFile(hash);
          if (record?.creator) this.rememberCreator(record);
          return record;
        }),
      ),
    );
  }

  /** The members of a privacy group; null when the hub knows no such group. */
  members(groupId: number): Promise<GroupMemberRecord[] | null> {
    return this.groupMembers.load(groupId);
  }

  /** The members of a privacy group by its exact name; null when the hub knows no such group. */
  membersByName(name: string): Promise<GroupMemberRecord[] | null> {
    return this.groupMembersByName.load(name);
  }

  /** Every permission the channel grants a connection, by its address-book id; null when there is none. */
  allowed(abookId: number): Promise<Map<string, boolean> | null> {
    return this.allowedByConnection.load(abookId);
  }

  /** A file with its ancestor folders (file/export); null when there is none. */
  fileExport(hash: string): Promise<FileExportRecord | null> {
    return this.fileExports.load(hash);
  }

  /** A whole thread by its top item's id or message id; null when there is none. */
  thread(by: { item_id: number } | { mid: string }): Promise<ItemRecord[] | null> {
    return this.threads.load('item_id' in by ? `id:${by.item_id}` : `mid:${by.mid}`);
  }

  /** Records a thread already read (from a stream or item/full), so its parent and comments cost no call. */
  primeThread(items: readonly ItemRecord[]): void {
    const top = items.find((i) => i.message_id === i.message_top);
    if (!top) return;
    this.threads.prime(`mid:${top.message_top}`, [...items]);
    if (top.id !== null) this.threads.prime(`id:${top.id}`, [...items]);
  }

  /**
   * Who uploaded a file: from its record when it says, else from what this
   * credential read before (creators never change), else from filemeta.
   */
  async creator(record: FileRecord): Promise<string | null> {
    if (record.creator) return record.creator;
    // Creators are remembered for the channel the hub verified, so that each login of it shares them: learn it once (verify).
    if (this.client.verifiedScope === null) await this.info().catch(() => null);
    const scope = this.client.cacheScope;
    const known = scope === null ? undefined : knownCreator(scope, record.hash);
    if (known !== undefined) return known;
    return (await this.file(record.hash))?.creator ?? null;
  }

  private rememberCreator(record: FileRecord): void {
    const scope = this.client.cacheScope;
    if (scope !== null && record.creator) rememberCreator(scope, record.hash, record.creator);
  }

  /** One file by exact hash; null when there is none. */
  file(hash: string): Promise<FileRecord | null> {
    return this.files.load(hash);
  }

  /** channel/stream since `mindate` (hub default when null), read on past the hub's cut, once per request. */
  stream(mindate: string | null): Promise<ChannelStream> {
    const key = mindate ?? '';
    let promise = this.streams.get(key);
    if (!promise) {
      promise = this.readStream(mindate);
      this.streams.set(key, promise);
    }
    return promise;
  }

  /**
   * `zot_feed()` keeps the 201 threads that come first since `mindate`, the
   * oldest; a channel with more in the window would never show its newest.
   * So a read that comes back with 201 threads is followed by another from a
   * second before the last thread's first item (threads already read are
   * skipped), up to STREAM_READS reads; `cut` says the list still ends short.
   */
  private async readStream(mindate: string | null): Promise<ChannelStream> {
    const items: ItemRecord[] = [];
    const seen = new Set<string>();
    let since = mindate;
    for (let read = 0; read < STREAM_READS; read++) {
      const page = await this.client.listChannelStream(since);
      // The read's threads in order of first appearance (a Set keeps insertion order).
      const tops = new Set(page.map((item) => item.message_top));
      for (const item of page) if (!seen.has(item.message_top)) items.push(item);
      for (const top of tops) seen.add(top);
      const last = [...tops].at(-1);
      if (tops.size < FEED_THREADS || last === undefined) return { items, cut: false };
      const first = page
        .filter((i) => i.message_top === last && i.created !== null)
        .map((i) => i.created as string)
        .sort()[0];
      const next = first === undefined ? null : hubSecondBefore(first);
      if (next === null || (since !== null && next <= since)) break;
      since = next;
    }
    return { items, cut: true };
  }
}

/** Threads `zot_feed()` keeps of a channel/stream read (include/items.php: the rest are cut). */
const FEED_THREADS = 201;
/** channel/stream reads one `stream` field may make: the first and the reads on past the cut (in its cost estimate). */
export const STREAM_READS = 5;

/** A channel/stream read on past the hub's cut; `cut` when even STREAM_READS reads did not reach its end. */
export interface ChannelStream {
  items: ItemRecord[];
  cut: boolean;
}

/** An ISO instant one second earlier, as the hub's `YYYY-MM-DD HH:MM:SS`. */
function hubSecondBefore(iso: string): string | null {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : new Date(ms - 1000).toISOString().slice(0, 19).replace('T', ' ');
}

export class HubzillaLoaders {
  /** Nicknames of the login's account (channel/list), read once. */
  readonly channelList: () => Promise<string[]>;
  private readonly xchans: DataLoader<string, XchanRecord | null>;
  private readonly channels = new Map<string, ChannelLoaders>();

  constructor(readonly client: HubzillaClient) {
    this.channelList = memo(() => client.listChannels());
    this.xchans = new DataLoader((keys) =>
      eachSettled(
        keys.map(async (key) => {
          const colon = key.indexOf(':');
          const record = await client.getXchan(key.slice(0, colon) as XchanKey, key.slice(colon + 1));
          // The same xchan under its other keys costs no further call.
          if (record) this.primeXchan(record);
          return record;
        }),
      ),
    );
  }

  /** Loaders of one channel; `null` is the login's default channel. */
  channel(nickname: string | null): ChannelLoaders {
    const key = nickname ?? '';
    let loaders = this.channels.get(key);
    if (!loaders) {
      loaders = new ChannelLoaders(this.client.forChannel(nickname));
      this.channels.set(key, loaders);
    }
    return loaders;
  }

  /** One xchan by address, hash or guid; null when the hub does not know it. Throws InputError for an unsafe value. */
  xchan(key: XchanKey, value: string): Promise<XchanRecord | null> {
    checkXchanValue(key, value);
    return this.xchans.load(`${key}:${value}`);
  }

  /** Records an xchan already read (connections, group members), under all three keys. */
  primeXchan(record: XchanRecord): void {
    for (const [key, value] of [
      ['hash', record.hash],
      ['guid', record.guid],
      ['address', record.address],
    ] as const) {
      if (value) this.xchans.prime(`${key}:${value}`, record);
    }
  }
}
