/**
 * The channel's file storage (`attach` rows) and its endpoints: files,
 * filedata, filemeta, file, file/export, file/export_page (reference §1.5).
 */
import { encodeItem } from './activity.js';
import type { ApiContext } from './context.js';
import { formatDate, parseUserDate } from './dates.js';
import { uuidFor } from './identifiers.js';
import type { AttachRow, ChannelRow, PhotoRow } from './records.js';
import { EMPTY_HTML, json, type ApiResult } from './reply.js';
import { intParam, param } from './request-params.js';
import type { Store } from './store.js';

/** Directories are stored with this mime type (files_after_upload.txt). */
export const DIRECTORY_TYPE = 'multipart/mixed';

export interface Acl {
  allow_cid: string;
  allow_gid: string;
  deny_cid: string;
  deny_gid: string;
}

const OPEN_ACL: Acl = { allow_cid: '', allow_gid: '', deny_cid: '', deny_gid: '' };

/** Returns the folder at `displayPath` ("a/b"), creating missing levels. */
export function ensureFolder(store: Store, channel: ChannelRow, displayPath: string, created: string): AttachRow {
  let parent: AttachRow | undefined;
  let path = '';
  for (const name of displayPath.split('/').filter((s) => s !== '')) {
    path = path ? `${path}/${name}` : name;
    const existing = store.attach.find((a) => a.uid === channel.channel_id && a.is_dir === 1 && a.display_path === path);
    if (existing) {
      parent = existing;
      continue;
    }
    const id = store.nextId('attach');
    const hash = uuidFor(`attach:${id}`);
    const row: AttachRow = {
      id,
      aid: channel.channel_account_id,
      uid: channel.channel_id,
      hash,
      creator: channel.channel_hash,
      filename: name,
      filetype: DIRECTORY_TYPE,
      filesize: 0,
      revision: 0,
      folder: parent?.hash ?? '',
      flags: 0,
      is_dir: 1,
      is_photo: 0,
      os_storage: 1,
      os_path: parent ? `${parent.os_path}/${hash}` : hash,
      display_path: path,
      created,
      edited: created,
      ...OPEN_ACL,
    };
    store.attach.push(row);
    parent = row;
  }
  if (!parent) throw new Error('ensureFolder needs a non-empty path');
  return parent;
}

/** Stores a file in `folder` (or the root) and bumps the folder's `edited`, as the real hub does. */
export function storeFile(
  store: Store,
  channel: ChannelRow,
  folder: AttachRow | undefined,
  file: { filename: string; filetype: string; data: Buffer; created: string; isPhoto?: boolean; acl?: Acl },
): AttachRow {
  const id = store.nextId('attach');
  const hash = uuidFor(`attach:${id}`);
  const row: AttachRow = {
    id,
    aid: channel.channel_account_id,
    uid: channel.channel_id,
    hash,
    creator: channel.channel_hash,
    filename: file.filename,
    filetype: file.filetype,
    filesize: file.data.length,
    revision: 0,
    folder: folder?.hash ?? '',
    flags: 0,
    is_dir: 0,
    is_photo: file.isPhoto ? 1 : 0,
    os_storage: 1,
    os_path: folder ? `${folder.os_path}/${hash}` : hash,
    display_path: folder ? `${folder.display_path}/${file.filename}` : file.filename,
    created: file.created,
    edited: file.created,
    ...(file.acl ?? OPEN_ACL),
  };
  store.attach.push(row);
  store.fileData.set(hash, file.data);
  if (folder) folder.edited = file.created;
  return row;
}

/** SQL `LIKE` (case-insensitive collation): `%` and `_` in the value act as wildcards. */
export function sqlLike(value: string, pattern: string): boolean {
  const re = pattern
    .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    .replace(/%/g, '.*')
    .replace(/_/g, '.');
  return new RegExp(`^${re}$`, 'is').test(value);
}

/** The `files` listing row: `os_path`/`display_path` after `folder`, no `creator` (files.txt). */
function listRow(a: AttachRow): Record<string, unknown> {
  return {
    id: a.id,
    aid: a.aid,
    uid: a.uid,
    hash: a.hash,
    filename: a.filename,
    filetype: a.filetype,
    filesize: a.filesize,
    revision: a.revision,
    folder: a.folder,
    os_path: a.os_path,
    display_path: a.display_path,
    os_storage: a.os_storage,
    is_dir: a.is_dir,
    is_photo: a.is_photo,
    flags: a.flags,
    created: a.created,
    edited: a.edited,
    allow_cid: a.allow_cid,
    allow_gid: a.allow_gid,
    deny_cid: a.deny_cid,
    deny_gid: a.deny_gid,
  };
}

/** The full row with `content` in its column position (between display_path and created). */
function fullRow(a: AttachRow, content?: string): Record<string, unknown> {
  const { created, edited, allow_cid, allow_gid, deny_cid, deny_gid, ...head } = a;
  const row: Record<string, unknown> = { ...head };
  if (content !== undefined) row.content = content;
  return { ...row, created, edited, allow_cid, allow_gid, deny_cid, deny_gid };
}

function ownFiles(ctx: ApiContext): AttachRow[] {
  return ctx.store.attach.filter((a) => a.uid === ctx.channel.channel_id);
}

/**
 * files: `{success:true, results:[…]}` ordered by `created`; `filename` and
 * `filetype` are LIKE %x% matches, `filehash` exact; `since`/`until` bound
 * `created`. When `start` or `records` is non-zero the real hub appends
 * `start` and `records` (= count returned) (files_start_records.txt).
 */
export function listFiles(ctx: ApiContext): ApiResult {
  const { params } = ctx;
  const filehash = param(params, 'filehash');
  const filename = param(params, 'filename');
  const filetype = param(params, 'filetype');
  const since = parseUserDate(param(params, 'since') ?? '');
  const until = parseUserDate(param(params, 'until') ?? '');
  const start = intParam(params, 'start');
  const records = intParam(params, 'records');
  let rows = ownFiles(ctx)
    .filter(
      (a) =>
        (!filehash || a.hash === filehash) &&
        (!filename || sqlLike(a.filename, `%${filename}%`)) &&
        (!filetype || sqlLike(a.filetype, `%${filetype}%`)) &&
        (!since || a.created >= formatDate(since)) &&
        (!until || a.created <= formatDate(until)),
    )
    .sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : a.id - b.id));
  if (start || records) {
    rows = rows.slice(Math.max(0, start), records > 0 ? Math.max(0, start) + records : undefined);
    return json({ success: true, results: rows.map(listRow), start, records: rows.length });
  }
  return json({ success: true, results: rows.map(listRow) });
}

/**
 * filedata: `file_id` is a prefix match (`hash LIKE 'x%'`, first row), `start`
 * the first byte, `length` the chunk size before base64 (0 or absent = the whole
 * file). Returns `{attach:{…row, content, …, start, length}}` with `length` the
 * bytes actually read; a directory has `content:""` and no start/length
 * (filedata_dir.txt). Missing or unknown `file_id` -> empty 200.
 */
export function fileData(ctx: ApiContext): ApiResult {
  const { store, params } = ctx;
  const fileId = param(params, 'file_id');
  if (!fileId) return EMPTY_HTML;
  const row = ownFiles(ctx)
    .sort((a, b) => a.id - b.id)
    .find((a) => sqlLike(a.hash, `${fileId}%`));
  if (!row) return EMPTY_HTML;
  if (row.is_dir) return json({ attach: fullRow(row, '') });
  const data = store.fileData.get(row.hash) ?? Buffer.alloc(0);
  const start = Math.max(0, intParam(params, 'start'));
  let length = intParam(params, 'length');
  if (length < 1) length = row.filesize;
  const chunk = data.subarray(Math.min(start, data.length), Math.min(start + length, data.length));
  return json({ attach: { ...fullRow(row, chunk.toString('base64')), start, length: chunk.length } });
}

function exactFile(ctx: ApiContext): AttachRow | undefined {
  const fileId = param(ctx.params, 'file_id');
  if (!fileId) return undefined;
  return ownFiles(ctx).find((a) => a.hash === fileId);
}

/** filemeta: exact `file_id` (a prefix finds nothing: err_filemeta_prefix_not_accepted.txt); the row without content. */
export function fileMeta(ctx: ApiContext): ApiResult {
  const row = exactFile(ctx);
  return row ? json({ attach: fullRow(row) }) : EMPTY_HTML;
}

/** file: exact `file_id`; the row with the whole file base64-encoded (`""` for a directory). */
export function fileDetail(ctx: ApiContext): ApiResult {
  const row = exactFile(ctx);
  if (!row) return EMPTY_HTML;
  const content = row.is_dir ? '' : (ctx.store.fileData.get(row.hash) ?? Buffer.alloc(0)).toString('base64');
  return json({ attach: fullRow(row, content) });
}

/** A photo row with `content` in its column position (between filesize and imgscale). */
export function photoWithContent(p: PhotoRow, content: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) {
    if (k === 'imgscale') out.content = content;
    out[k] = v;
  }
  return out;
}

/** `attach_export_data()`: ancestor folders then the file, `content` = storage path, plus photo scales and items. */
function exportData(ctx: ApiContext, row: AttachRow | undefined): Record<string, unknown> {
  const { store, channel } = ctx;
  const out: Record<string, unknown> = {
    fetch_url: `${store.base}/getfile`,
    original_channel: channel.channel_address,
    attach: [],
  };
  if (!row) return out;
  const chain: AttachRow[] = [row];
  for (let cur = row; cur.folder !== ''; ) {
    const parent = ownFiles(ctx).find((a) => a.hash === cur.folder);
    if (!parent) break;
    chain.unshift(parent);
    cur = parent;
  }
  const storePath = (a: AttachRow): string => `store/${channel.channel_address}/${a.os_path}`;
  out.attach = chain.map((a) => ({ ...fullRow(a, storePath(a)), term: [] }));
  if (row.is_photo) {
    const scales = store.photos.filter((p) => p.uid === channel.channel_id && p.resource_id === row.hash).sort((a, b) => a.imgscale - b.imgscale);
    out.photo = scales.map((p) => photoWithContent(p, Buffer.from(`${storePath(row)}${p.imgscale > 0 ? `-${p.imgscale}` : ''}`).toString('base64')));
    const items = store.items.filter((i) => i.uid === channel.channel_id && i.resource_type === 'photo' && i.resource_id === row.hash);
    if (items.length > 0) out.item = items.map((i) => encodeItem(store, i, true));
  }
  return out;
}

/** file/export: missing `file_id` -> empty 200; unknown -> `attach: []` (err_file_export_notfound.txt). */
export function fileExport(ctx: ApiContext): ApiResult {
  if (!param(ctx.params, 'file_id')) return EMPTY_HTML;
  return json(exportData(ctx, exactFile(ctx)));
}

/** file/export_page (not in the spec): one export object per 0-based `page`, in id order. */
export function fileExportPage(ctx: ApiContext): ApiResult {
  const rows = ownFiles(ctx).sort((a, b) => a.id - b.id);
  const page = Math.max(0, intParam(ctx.params, 'page'));
  const row = rows[page];
  if (!row) return json({ success: false });
  return json({ success: true, total: rows.length, results: [exportData(ctx, row)] });
}
