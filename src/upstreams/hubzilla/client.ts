/**
 * The Hubzilla channel API client (`/api/z/1.0`) for one GraphQL request: it
 * carries that request's credentials, abort signal and selected channel, and
 * knows how the real hub (8.8.7) answers. Success or failure is decided by
 * the body, not the status: only a failed login (401), an unknown endpoint
 * (404) and PHP crashes (500) are HTTP errors; everything else arrives as a
 * 200 with an empty body, `false`, `[]` or `{"success":false}`. Records are
 * normalised here, once. No cookie is ever sent or kept: the hub's session
 * cookie would authenticate later calls over other credentials.
 */
import { InputError, UpstreamError, type UpstreamInfo } from '../../errors.js';
import type { RequestScope } from '../../request-scope.js';
import { creatorScope } from './creators.js';
import { forgetLogin, needsProof, provenUntil, proveOnce, rememberVerifiedChannel, verifiedChannel } from './identities.js';
import { codeForStatus, multipartBody, type FormPart, type HttpClient, type QueryValue } from '../http.js';
import type { Page } from '../pagination.js';
import {
  flag,
  groupPhotos,
  isObject,
  int,
  normaliseAlbum,
  normaliseChannel,
  normaliseConnection,
  normaliseFile,
  normaliseFileChunk,
  normaliseGroup,
  normaliseGroupMember,
  isContent,
  normaliseItem,
  normaliseXchan,
  stripSecrets,
  str,
} from './normalise.js';
import type {
  AlbumRecord,
  ChannelInfo,
  ConnectionRecord,
  ConnectionSettingRecord,
  FileChunk,
  FileExportRecord,
  FileRecord,
  GroupMemberRecord,
  GroupRecord,
  ItemRecord,
  ItemUpdateResult,
  PhotoContentRecord,
  PhotoRecord,
  RawRecord,
  XchanRecord,
} from './records.js';

/** `get_default_export_sections()` of 8.8.7: what an export without `sections` holds. */
export const DEFAULT_EXPORT_SECTIONS = ['channel', 'connections', 'config', 'apps'] as const;

/** The caller's Hubzilla credential: the Authorization header to forward, or why none can be sent. */
export type HubzillaAuth = { authorization: string } | { error: InputError } | null;

/** An empty 200 body: Hubzilla's "missing parameter", "not found" and "not your channel" answer. */
export const EMPTY = Symbol('empty body');
export type Body = unknown;

/** How xchan lookups are keyed. */
export type XchanKey = 'address' | 'hash' | 'guid';

/**
 * xchan_fetch() puts the value into SQL unescaped (`where $key = '$v'`), so
 * only a conservative character set is ever sent: letters, digits and
 * `@ . _ : ~ + = / -` (base64url hashes and guids, `nick@host:port`
 * addresses, old base64 and hex forms). Quotes, backslashes, spaces, `%`
 * and control characters are refused before any call.
 */
const XCHAN_VALUE = /^[A-Za-z0-9@._:~+=/-]{1,255}$/;

/** Throws InputError for an xchan lookup value Hubzilla could not take safely. */
export function checkXchanValue(key: XchanKey, value: string, field: string = key): string {
  if (!XCHAN_VALUE.test(value) || (key === 'address' && !/^[^@]+@[^@]+$/.test(value))) {
    throw new InputError(
      `"${value.slice(0, 80)}" is not a valid xchan ${key}: use letters, digits and @ . _ : ~ + = / - only${key === 'address' ? ', as nick@host' : ''}.`,
      [field],
    );
  }
  return value;
}

/** Channel nicknames as Hubzilla allows them (lower-case letters, digits, `-`, `_`, `.`). */
/** True for what Hubzilla accepts as a channel nickname. */
export function isNickname(nickname: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(nickname);
}

export function checkNickname(nickname: string, field = 'nickname'): string {
  if (!isNickname(nickname)) {
    throw new InputError(`"${nickname.slice(0, 80)}" is not a channel nickname.`, [field]);
  }
  return nickname;
}

/**
 * File hashes are UUIDs (old data: hex). filedata matches `hash LIKE 'x%'`,
 * so `%` and `_` would be wildcards: only letters, digits and `-` pass.
 */
export function checkFileHash(hash: string, field = 'hash'): string {
  if (!/^[A-Za-z0-9-]{1,128}$/.test(hash)) throw new InputError(`"${hash.slice(0, 80)}" is not a file hash.`, [field]);
  return hash;
}

/** Filters of network/stream the gateway passes on (gid and a bad cid crash the hub with 500). */
export interface NetworkStreamFilters {
  search?: string;
  cat?: string;
  star?: boolean;
  wall?: boolean;
  top?: boolean;
  order?: 'post' | 'commented';
  since_id?: number;
  dbegin?: string;
  dend?: string;
  cmin?: number;
  cmax?: number;
}

export interface FileFilters {
  filehash?: string;
  filename?: string;
  filetype?: string;
}

/** item/update form fields, in the names the hub reads (`source`, `permalink`; ACLs as arrays). */
export interface ItemUpdateParams {
  body: string;
  title?: string;
  summary?: string;
  mimetype?: string;
  parent?: number;
  parent_mid?: string;
  post_id?: number;
  contact_allow?: readonly string[];
  contact_deny?: readonly string[];
  group_allow?: readonly string[];
  group_deny?: readonly string[];
  category?: string;
  location?: string;
  coord?: string;
  expire?: string;
  source?: string;
  permalink?: string;
  nocomment?: boolean;
  consensus?: boolean;
  verb?: string;
  obj_type?: string;
  webpage?: number;
  pagetitle?: string;
  layout_mid?: string;
  created?: string;
  message_id?: string;
  namespace?: string;
  remote_id?: string;
  remote_xchan?: string;
  origin?: boolean;
}

/** item/update's refusal (`{"success":false,"message":…}`): the caller's input was at fault. */
export class ItemUpdateRefused extends Error {
  override readonly name = 'ItemUpdateRefused';
}

/** One thread of network/stream: the top-level item and the rest of its thread. */
export interface ItemThread {
  top: ItemRecord;
  items: ItemRecord[];
}

/** Splits a conv_sort()-ordered item list into threads, in order of their tops. */
export function threadsOf(items: readonly ItemRecord[]): ItemThread[] {
  const threads = new Map<string, ItemThread>();
  const orphans: ItemRecord[] = [];
  for (const item of items) {
    if (item.message_id === item.message_top) threads.set(item.message_top, { top: item, items: [item] });
  }
  for (const item of items) {
    if (item.message_id === item.message_top) continue;
    const thread = threads.get(item.message_top);
    if (thread) thread.items.push(item);
    else orphans.push(item);
  }
  // since_id drops older tops but may keep their newer comments: each stands alone then.
  return [...threads.values(), ...orphans.map((item) => ({ top: item, items: [item] }))];
}

export class HubzillaClient {
  constructor(
    private readonly http: HttpClient | null,
    private readonly auth: HubzillaAuth,
    private readonly signal?: AbortSignal,
    /** The channel every call selects with `channel=`; null for the login's default channel. */
    readonly channel: string | null = null,
    /** The request the calls serve (its id and trace context go upstream). */
    private readonly scope?: RequestScope,
  ) {}

  /** The channel the hub lately verified this login (and channel) as: the scope every login of that channel shares; null until verify says. */
  get verifiedScope(): string | null {
    const channel = this.http && this.auth && 'authorization' in this.auth ? verifiedChannel(this.http, this.auth.authorization, this.channel) : undefined;
    return channel === undefined ? null : `channel:${channel}`;
  }

  /** The scope of this credential and channel for caches kept across requests: the verified channel, else the credential; null without a credential. */
  get cacheScope(): string | null {
    if (!this.auth || !('authorization' in this.auth)) return null;
    return this.verifiedScope ?? creatorScope(this.auth.authorization, this.channel);
  }

  /** This client acting on another channel of the same account. */
  forChannel(nickname: string | null): HubzillaClient {
    return new HubzillaClient(this.http, this.auth, this.signal, nickname === null ? null : checkNickname(nickname), this.scope);
  }

  // --- channel ---------------------------------------------------------

  /** GET channel/list: the nicknames of the login's account. */
  async listChannels(): Promise<string[]> {
    const body = await this.get(['channel', 'list'], {}, false);
    return Array.isArray(body) ? body.map(str) : [];
  }

  /** GET verify: the channel's public fields; null when the hub refuses the channel. The key, password hash and salt never leave this method. */
  async getChannel(): Promise<ChannelInfo | null> {
    const body = await this.get(['verify']);
    const channel = isObject(body) ? normaliseChannel(body) : null;
    if (channel && this.http && this.auth && 'authorization' in this.auth)
      rememberVerifiedChannel(this.http, this.auth.authorization, this.channel, channel.channel_hash, this.http.now());
    return channel;
  }

  /**
   * GET channel/export/basic with the given sections, every secret removed at
   * any depth. `posts` adds the `items` section (a month of wall posts): the
   * hub's own `posts` parameter is read by nothing in 8.8.7.
   */
  async exportChannel(sections: readonly string[] | null, posts = false): Promise<unknown> {
    let asked = sections?.length ? [...sections] : posts ? [...DEFAULT_EXPORT_SECTIONS] : [];
    if (posts && !asked.includes('items')) asked = [...asked, 'items'];
    const body = await this.get(['channel', 'export', 'basic'], { sections: asked.length ? asked.join(',') : undefined });
    if (body === EMPTY) throw this.failure('sent an empty export', ['channel', 'export', 'basic']);
    return stripSecrets(body);
  }

  // --- items -----------------------------------------------------------

  /**
   * GET channel/stream: the channel's wall items created or changed after
   * `mindate` (the hub defaults to 14 days ago), whole threads, oldest
   * first. The endpoint has no pagination at all.
   */
  async listChannelStream(mindate: string | null): Promise<ItemRecord[]> {
    const body = await this.get(['channel', 'stream'], { mindate: mindate ?? undefined });
    return this.items(body, ['channel', 'stream']);
  }

  /**
   * GET network/stream, exactly `limit` threads from `offset`:
   * `start`/`records` count top-level threads, and each comes with all its
   * comments. No look-ahead thread: the hub re-sorts each page it returns,
   * so one more record can push a thread of the window out (fetchSlice).
   */
  async listNetworkStream(filters: NetworkStreamFilters, page: { offset: number; limit: number }): Promise<{ items: ItemThread[]; full: boolean }> {
    const query: Record<string, QueryValue> = {
      search: filters.search,
      cat: filters.cat,
      star: filters.star ? 1 : undefined,
      wall: filters.wall ? 1 : undefined,
      top: filters.top ? 1 : undefined,
      order: filters.order,
      since_id: filters.since_id,
      dbegin: filters.dbegin,
      dend: filters.dend,
      cmin: filters.cmin,
      cmax: filters.cmax,
      start: page.offset,
      records: page.limit,
    };
    const body = await this.get(['network', 'stream'], query);
    const threads = threadsOf(this.items(body, ['network', 'stream']));
    return { items: threads, full: threads.length >= page.limit };
  }

  /** GET item/full by thread parent id or top message id: the whole thread, top first; null when there is none (`[]`). */
  async getItemThread(by: { item_id: number } | { mid: string }): Promise<ItemRecord[] | null> {
    const body = await this.get(['item', 'full'], by);
    if (isObject(body) && Array.isArray(body.item)) {
      const items = body.item.filter(isObject).map(normaliseItem).filter(isContent);
      return items.length > 0 ? items : null;
    }
    if (Array.isArray(body) || body === EMPTY) return null;
    throw this.failure('sent an item/full answer of an unknown shape', ['item', 'full']);
  }

  /**
   * POST item/update as a form (multipart when `media` is given): creates a
   * post, a comment (`parent`) or an edit (`post_id`). Throws
   * ItemUpdateRefused for `{"success":false}` and NOT_FOUND for the empty
   * answer to an unknown post_id.
   */
  async updateItem(params: ItemUpdateParams, media?: { file: Blob; filename: string }): Promise<ItemUpdateResult> {
    const fields: [string, string][] = [];
    for (const [key, value] of Object.entries(params) as [string, unknown][]) {
      if (value === undefined || value === null) continue;
      if (Array.isArray(value)) for (const v of value) fields.push([`${key}[]`, String(v)]);
      else if (typeof value === 'boolean') fields.push([key, value ? '1' : '0']);
      else fields.push([key, String(value)]);
    }
    if (this.channel) fields.push(['channel', this.channel]);
    let body: URLSearchParams | ReturnType<typeof multipartBody>;
    if (media) {
      const parts: FormPart[] = fields.map(([name, value]) => ({ name, value }));
      parts.push({ name: 'media', file: media.file, filename: media.filename });
      body = multipartBody(parts);
    } else {
      body = new URLSearchParams(fields);
    }
    const path = ['item', 'update'];
    const answer = await this.send('POST', path, {}, body);
    if (answer === EMPTY) {
      // An unknown post_id makes the hub killme() with an empty 200; so does a channel of another account.
      if (params.post_id !== undefined) throw new UpstreamError('Hubzilla has no item with that id to edit.', 'NOT_FOUND', this.info('POST', path, 200));
      if (this.channel)
        throw new UpstreamError(
          `Hubzilla refused channel "${this.channel}": it is not a channel of this login's account.`,
          'FORBIDDEN',
          this.info('POST', path, 200),
        );
      throw this.failure('sent an empty answer', path, 'POST');
    }
    if (!isObject(answer)) throw this.failure('sent an item/update answer of an unknown shape', path, 'POST');
    // 8.8.7 answers {success:true,item_id,item}; 10.x may fall back to the web UI's {success:1,id,html}.
    if (answer.success !== true && answer.success !== 1) throw new ItemUpdateRefused(str(answer.message) || 'Hubzilla refused the item.');
    const item = isObject(answer.item) ? normaliseItem(answer.item) : isObject(answer.activity) ? normaliseItem(answer.activity) : null;
    return { item_id: int(answer.item_id ?? answer.id) ?? item?.id ?? null, item };
  }

  // --- xchans and connections -----------------------------------------

  /** GET xchan by exactly one key; null when the hub does not know it (`false`). */
  async getXchan(key: XchanKey, value: string): Promise<XchanRecord | null> {
    checkXchanValue(key, value);
    // GET only: a POST to xchan would store the request as an xchan row.
    const body = await this.get(['xchan'], { [key]: value }, false);
    return isObject(body) ? normaliseXchan(body) : null;
  }

  /** GET abook: the channel's connections (its own "self" entry included), with their xchans. */
  async listConnections(): Promise<ConnectionRecord[]> {
    const body = await this.get(['abook']);
    return this.list(body, ['abook'])
      .map(normaliseConnection)
      .filter((c): c is ConnectionRecord => c !== null);
  }

  /** GET abconfig: the settings of every connection (permissions among them); empty for a channel without connections. */
  async listConnectionSettings(): Promise<ConnectionSettingRecord[]> {
    const body = await this.get(['abconfig']);
    return this.list(body, ['abconfig']).map((r) => ({ xchan: str(r.xchan), cat: str(r.cat), k: str(r.k), v: str(r.v) }));
  }

  /**
   * GET perm_allowed without `perm`: every permission the channel grants, as
   * the hub computes it (its limits and the connection's own settings).
   * By `abook_id` for a connection; by `hash` the hub evaluates an unknown
   * observer (it misreads xchan_fetch()'s answer), which is right only for
   * identities that are not connections. Null when the hub finds neither (`false`).
   */
  async allowedPermissions(by: { abook_id: number } | { hash: string }): Promise<Map<string, boolean> | null> {
    if ('hash' in by) checkXchanValue('hash', by.hash);
    const path = ['perm_allowed'];
    const body = await this.get(path, by);
    if (body === false) return null;
    const rows = this.list(body, path);
    // `allowed` is a 0/1 number without `perm`, a boolean with it.
    return new Map(rows.map((r) => [str(r.perm), r.allowed === true || flag(r.allowed)]));
  }

  // --- files -------------------------------------------------------------

  /** GET files with filters, `start`/`records` as offset/limit; ordered by creation, oldest first. */
  async listFiles(filters: FileFilters, page: { offset: number; limit: number }): Promise<Page<FileRecord>> {
    const path = ['files'];
    // One record more than asked tells whether a next page exists (the hub
    // sends no total); records=0 would mean "no limit", so it is never sent.
    const body = await this.get(path, { ...filters, start: page.offset, records: page.limit + 1 });
    if (isObject(body) && body.success === true && Array.isArray(body.results)) {
      const items = body.results.filter(isObject).map(normaliseFile);
      return { items: items.slice(0, page.limit), total: null, hasNext: items.length > page.limit };
    }
    if (isObject(body) && body.success === false) {
      throw new UpstreamError(
        `Hubzilla refused the file list: ${str(body.message).slice(0, 200) || 'no reason given'}.`,
        'FORBIDDEN',
        this.info('GET', path, 200),
      );
    }
    throw this.failure('sent a file list of an unknown shape', path);
  }

  /** GET filemeta (exact hash): the file record; null when there is none. */
  async getFile(hash: string): Promise<FileRecord | null> {
    checkFileHash(hash);
    const body = await this.get(['filemeta'], { file_id: hash });
    return isObject(body) && isObject(body.attach) ? normaliseFile(body.attach) : null;
  }

  /**
   * GET file/export: the file's record and its ancestor folders, root first
   * and the file last, each with its creator; null for an unknown file
   * (`attach: []`). The hub's `content` (a storage path) is dropped.
   */
  async exportFile(hash: string): Promise<FileExportRecord | null> {
    checkFileHash(hash);
    const path = ['file', 'export'];
    const body = await this.get(path, { file_id: hash });
    if (body === EMPTY) return null;
    if (!isObject(body) || !Array.isArray(body.attach)) throw this.failure('sent a file export of an unknown shape', path);
    const attach = body.attach.filter(isObject).map(normaliseFile);
    if (attach.length === 0 || attach[attach.length - 1]?.hash !== hash) return null;
    return { fetch_url: str(body.fetch_url), original_channel: str(body.original_channel), attach };
  }

  /**
   * GET photo: one scale of a photo, its bytes base64 in the answer (the hub
   * has no chunked read for photos); null when there is none (an empty 200).
   */
  async getPhoto(resourceId: string, scale: number): Promise<PhotoContentRecord | null> {
    checkFileHash(resourceId, 'resourceId');
    const path = ['photo'];
    const body = await this.get(path, { photo_id: resourceId, scale });
    if (body === EMPTY) return null;
    if (!isObject(body) || !isObject(body.photo)) throw this.failure('sent a photo of an unknown shape', path);
    const photo = body.photo;
    if (str(photo.resource_id) !== resourceId || typeof photo.content !== 'string') return null;
    return {
      resource_id: resourceId,
      imgscale: int(photo.imgscale) ?? scale,
      mimetype: str(photo.mimetype),
      filename: str(photo.filename),
      content: photo.content,
    };
  }

  /**
   * GET filedata: `length` bytes from `start` (base64). filedata matches
   * hashes by prefix, so an answer for another file counts as none. Null
   * when there is no such file, or it is a folder.
   */
  async getFileData(hash: string, start: number, length: number): Promise<FileChunk | null> {
    checkFileHash(hash);
    const body = await this.get(['filedata'], { file_id: hash, start, length });
    const chunk = isObject(body) ? normaliseFileChunk(body) : null;
    return chunk && chunk.file.hash === hash ? chunk : null;
  }

  // --- photos ------------------------------------------------------------

  /** GET albums; `{"success":false}` means no albums. */
  async listAlbums(): Promise<AlbumRecord[]> {
    const path = ['albums'];
    const body = await this.get(path);
    if (isObject(body) && Array.isArray(body.albums)) return body.albums.filter(isObject).map(normaliseAlbum);
    if (isObject(body) && body.success === false) return [];
    // A bare `false` is the hub's "no view_storage permission".
    if (body === false) throw new UpstreamError("Hubzilla does not let this login see the channel's photos.", 'FORBIDDEN', this.info('GET', path, 200));
    throw this.failure('sent an album list of an unknown shape', path);
  }

  /** GET photos (of one album by display name, or all): one record per photo with its scales. */
  async listPhotos(album: string | null): Promise<PhotoRecord[]> {
    const path = ['photos'];
    const body = await this.get(path, { album: album ?? undefined });
    if (isObject(body) && Array.isArray(body.photos)) return groupPhotos(body.photos.filter(isObject));
    if (isObject(body) && body.success === false) return [];
    throw this.failure('sent a photo list of an unknown shape', path);
  }

  // --- privacy groups ------------------------------------------------------

  /** GET group: every privacy group, deleted ones included (the hub does not filter them). */
  async listGroups(): Promise<GroupRecord[]> {
    const body = await this.get(['group']);
    return this.list(body, ['group']).map(normaliseGroup);
  }

  /** GET group_members by group id; null when the hub knows no such group (an empty body with a JSON content type). */
  async listGroupMembers(groupId: number): Promise<GroupMemberRecord[] | null> {
    const body = await this.get(['group_members'], { group_id: groupId });
    if (body === EMPTY) return null;
    return this.list(body, ['group_members']).map(normaliseGroupMember);
  }

  /** GET group_members by exact group name; null when the hub knows no such group. */
  async listGroupMembersByName(name: string): Promise<GroupMemberRecord[] | null> {
    const body = await this.get(['group_members'], { group_name: name });
    if (body === EMPTY) return null;
    return this.list(body, ['group_members']).map(normaliseGroupMember);
  }

  // --- transport -------------------------------------------------------------

  private get(path: readonly string[], query: Readonly<Record<string, QueryValue>> = {}, withChannel = true): Promise<Body> {
    return this.send('GET', path, withChannel && this.channel ? { ...query, channel: this.channel } : query);
  }

  /**
   * One call; returns the parsed body, or EMPTY for an empty one. Throws
   * for HTTP errors (401 UNAUTHENTICATED, 404 NOT_FOUND, 5xx UPSTREAM_ERROR),
   * transport failures, and bodies that are not JSON.
   */
  private async send(method: 'GET' | 'POST', path: readonly string[], query: Readonly<Record<string, QueryValue>>, body?: unknown): Promise<Body> {
    if (!this.http) throw new UpstreamError('Hubzilla is not configured on this gateway.', 'UPSTREAM_UNAVAILABLE', this.info(method, path, null));
    if (this.auth && 'error' in this.auth) throw this.auth.error;
    // Every endpoint of the channel API logs in first (api_login): without a credential, no call could succeed.
    if (!this.auth) {
      throw new UpstreamError(
        'Hubzilla needs credentials: send X-Hubzilla-Authorization (Basic login:password, or Bearer token).',
        'UNAUTHENTICATED',
        this.info(method, path, null),
      );
    }
    const http = this.http;
    const { authorization } = this.auth;
    // A login that shares its channel's stored answers is verified again once the hub's last word on it is old (identities.ts).
    if (path[0] !== 'verify' && needsProof(http, authorization, this.channel, http.now())) {
      await proveOnce(http, authorization, this.channel, () => this.getChannel());
    }
    const headers: Record<string, string> = { authorization };
    // Answers are kept for the channel the hub verified this login as, when known: its other logins share them.
    const identity = this.verifiedScope ?? undefined;
    // An answer built on what the channel's logins share is served no longer than this login's proof lasts.
    const usage = this.scope?.cache;
    if (identity !== undefined && usage) usage.servableUntil = Math.min(usage.servableUntil, provenUntil(http, authorization, this.channel));
    const response = await http.text({ method, path, query, headers, body, signal: this.signal, scope: this.scope, cacheIdentity: identity });
    try {
      return parseAnswer(response.status, response.text, response.info);
    } catch (error) {
      // A login the hub refuses shares nothing from now on, whatever it was verified as before.
      if (error instanceof UpstreamError && error.code === 'UNAUTHENTICATED') forgetLogin(http, authorization);
      throw error;
    }
  }

  private items(body: Body, path: readonly string[]): ItemRecord[] {
    return this.list(body, path).map(normaliseItem).filter(isContent);
  }

  /** A bare JSON array of objects; an empty body where a list is expected means the channel was refused. */
  private list(body: Body, path: readonly string[]): RawRecord[] {
    if (Array.isArray(body)) return body.filter(isObject);
    if (body === EMPTY && this.channel) {
      throw new UpstreamError(
        `Hubzilla refused channel "${this.channel}": it is not a channel of this login's account.`,
        'FORBIDDEN',
        this.info('GET', path, 200),
      );
    }
    throw this.failure(body === EMPTY ? 'sent an empty answer' : 'sent an answer of an unknown shape', path);
  }

  private failure(what: string, path: readonly string[], method: 'GET' | 'POST' = 'GET'): UpstreamError {
    return new UpstreamError(`Hubzilla ${what}.`, 'UPSTREAM_ERROR', this.info(method, path, 200));
  }

  private info(method: string, path: readonly string[], status: number | null): UpstreamInfo {
    const base = this.http ? this.http.baseUrl.pathname.replace(/\/+$/, '') : '/api/z/1.0';
    return { name: 'hubzilla', status, method, path: `${base}/${path.map(encodeURIComponent).join('/')}` };
  }
}

/**
 * Maps one raw answer to a body or an error: the one place that knows which
 * statuses Hubzilla really uses. Exported for the capture tests.
 */
export function parseAnswer(status: number, text: string, info: UpstreamInfo): Body {
  if (status === 401) {
    // "This api requires login": wrong password, unknown login, bad token, or none sent.
    throw new UpstreamError('Hubzilla refused the credentials (send X-Hubzilla-Authorization: Basic or Bearer).', 'UNAUTHENTICATED', info);
  }
  if (status === 404)
    throw new UpstreamError(
      'Hubzilla answered 404: the hub does not implement this endpoint, or HUBZILLA_URL is not the address of a hub (its API is read at /api/z/1.0 under it).',
      'NOT_FOUND',
      info,
    );
  if (status >= 300) {
    const code = status >= 500 ? 'UPSTREAM_ERROR' : codeForStatus(status);
    throw new UpstreamError(`Hubzilla answered ${status}.`, code, info);
  }
  if (text.trim() === '') return EMPTY;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UpstreamError('Hubzilla sent a body that is not JSON.', 'UPSTREAM_ERROR', info);
  }
}
