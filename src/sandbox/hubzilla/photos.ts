/**
 * Photo albums and photos: storing an image the way the real hub does (an
 * attach row in the album folder, one photo row per scale, a hidden item
 * announcing it) and the albums, photos and photo endpoints (reference §1.5).
 */
import { encodeItem } from './activity.js';
import type { ApiContext } from './context.js';
import { addSeconds } from './dates.js';
import { ensureFolder, photoWithContent, storeFile } from './files.js';
import type { AttachRow, ChannelRow, PhotoRow } from './records.js';
import { EMPTY_HTML, json, phpJsonEncode, type ApiResult } from './reply.js';
import { intParam, param } from './request-params.js';
import type { Store } from './store.js';

const EXTENSIONS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp' };

/** Mime types the photo store accepts; other uploads stay plain files. */
export function isImageType(mimetype: string): boolean {
  return mimetype in EXTENSIONS;
}

/** PHP `urlencode()`: only `A-Za-z0-9_.-` stay, a space becomes `+`. */
export function phpUrlencode(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

/** PHP `addslashes()`. */
function addslashes(s: string): string {
  return s.replace(/[\\'"\0]/g, (c) => (c === '\0' ? '\\0' : `\\${c}`));
}

/** Hubzilla's `ellipsify($s, 28)` for album `shorttext`: keeps both ends around "...". */
function ellipsify(s: string, maxlen: number): string {
  const chars = [...s];
  if (chars.length < maxlen) return s;
  const half = maxlen / 2;
  return `${chars.slice(0, half).join('')}...${chars.slice(chars.length - half + 3).join('')}`;
}

export interface StoredPhoto {
  attach: AttachRow;
  scales: PhotoRow[];
}

/**
 * Stores an image into album folder `album`: the attach row (is_photo=1), photo
 * rows for scales 0-3 (`scaled[n]` or the original bytes) and the hidden
 * "posted a new photo" item. Photo `expires` is created + 1 day, as captured.
 */
export function storePhoto(
  store: Store,
  channel: ChannelRow,
  photo: {
    album: string;
    filename: string;
    mimetype: string;
    data: Buffer;
    width: number;
    height: number;
    created: string;
    title?: string;
    description?: string;
    scaled?: readonly Buffer[];
  },
): StoredPhoto {
  const folder = ensureFolder(store, channel, photo.album, photo.created);
  const attach = storeFile(store, channel, folder, {
    filename: photo.filename,
    filetype: photo.mimetype,
    data: photo.data,
    created: photo.created,
    isPhoto: true,
  });
  const scales: PhotoRow[] = [];
  for (let scale = 0; scale <= 3; scale++) {
    const bytes = scale === 0 ? photo.data : (photo.scaled?.[scale] ?? photo.data);
    const row: PhotoRow = {
      id: store.nextId('photo'),
      aid: channel.channel_account_id,
      uid: channel.channel_id,
      xchan: '',
      resource_id: attach.hash,
      created: photo.created,
      edited: photo.created,
      expires: addSeconds(photo.created, 24 * 3600),
      title: photo.title ?? '',
      description: photo.description ?? '',
      album: folder.display_path,
      filename: photo.filename,
      mimetype: photo.mimetype,
      height: photo.height,
      width: photo.width,
      filesize: bytes.length,
      imgscale: scale,
      photo_usage: 0,
      profile: 0,
      is_nsfw: 0,
      os_storage: 1,
      os_path: attach.os_path,
      display_path: attach.display_path,
      photo_flags: 0,
      allow_cid: '',
      allow_gid: '',
      deny_cid: '',
      deny_gid: '',
    };
    store.photos.push(row);
    store.photoData.set(row.id, bytes);
    scales.push(row);
  }
  addPhotoItem(store, channel, attach, folder, photo);
  return { attach, scales };
}

function addPhotoItem(
  store: Store,
  channel: ChannelRow,
  attach: AttachRow,
  folder: AttachRow,
  photo: { filename: string; mimetype: string; width: number; height: number; created: string },
): void {
  const me = store.selfXchan(channel);
  const nick = channel.channel_address;
  const imageUrl = `${store.base}/photos/${nick}/image/${attach.hash}`;
  const albumUrl = `${store.base}/photos/${nick}/album/${folder.hash}`;
  const body = `[footer][zrl=${me.xchan_url}]${me.xchan_name}[/zrl] posted [zrl=${imageUrl}]a new photo[/zrl] to [zrl=${albumUrl}]${folder.display_path}[/zrl][/footer]`;
  const a = (href: string, text: string): string => `<a class="zrl" href="${href}"  target="_blank"  rel="nofollow noopener" >${text}</a>`;
  const html = `<div class="wall-item-footer">${a(me.xchan_url, me.xchan_name)} posted ${a(imageUrl, 'a new photo')} to ${a(albumUrl, folder.display_path)}</div>`;
  const id = store.nextId('item');
  const ext = EXTENSIONS[photo.mimetype] ?? 'jpg';
  const iso = `${photo.created.replace(' ', 'T')}Z`;
  const row = store.insertItem({
    id,
    uid: channel.channel_id,
    aid: channel.channel_account_id,
    owner_xchan: me.xchan_hash,
    author_xchan: me.xchan_hash,
    created: photo.created,
    title: photo.filename,
    body,
    obj_type: 'http://activitystrea.ms/schema/1.0/photo',
    tgt_type: 'orderedCollection',
    resource_id: attach.hash,
    resource_type: 'photo',
    allow_cid: `<${me.xchan_hash}>`,
    item_wall: 0,
    item_hidden: 1,
    item_unseen: 1,
  });
  const url = [0, 1, 2, 3].map((s) => ({
    type: 'Link',
    mediaType: photo.mimetype,
    href: `${store.base}/photo/${attach.hash}-${s}.${ext}`,
    width: photo.width,
    height: photo.height,
  }));
  row.obj = phpJsonEncode({
    type: 'Image',
    name: photo.filename,
    published: iso,
    updated: iso,
    attributedTo: me.xchan_url,
    id: row.mid,
    'diaspora:guid': row.uuid,
    url: [...url, { type: 'Link', mediaType: 'text/html', href: imageUrl }],
    source: { content: body, mediaType: 'text/bbcode' },
    content: html,
    to: [me.xchan_url],
  });
  row.target = phpJsonEncode({ type: 'orderedCollection', name: folder.display_path, id: `${store.base}/album/${nick}/${folder.hash}` });
}

function ownPhotos(ctx: ApiContext): PhotoRow[] {
  return ctx.store.photos.filter((p) => p.uid === ctx.channel.channel_id).sort((a, b) => a.id - b.id);
}

/**
 * albums: `{success:true, albums:[{text, shorttext, jstext, total, url,
 * urlencode, bin2hex}]}` where `bin2hex` is the folder hash despite its name;
 * no albums -> `{"success":false}` without an `albums` key (albums_empty.txt).
 */
export function listAlbums(ctx: ApiContext): ApiResult {
  const { store, channel } = ctx;
  const totals = new Map<string, Set<string>>();
  for (const p of ownPhotos(ctx)) {
    const set = totals.get(p.album) ?? new Set<string>();
    set.add(p.resource_id);
    totals.set(p.album, set);
  }
  if (totals.size === 0) return json({ success: false });
  const albums = [...totals.keys()].sort().map((album) => {
    const folder = store.attach.find((a) => a.uid === channel.channel_id && a.is_dir === 1 && a.display_path === album);
    const hash = folder?.hash ?? '';
    return {
      text: album,
      shorttext: ellipsify(album, 28),
      jstext: addslashes(album),
      total: totals.get(album)?.size ?? 0,
      url: `${store.base}/photos/${channel.channel_address}/album/${hash}`,
      urlencode: phpUrlencode(album),
      bin2hex: hash,
    };
  });
  return json({ success: true, albums });
}

/**
 * photos: one entry per stored scale (a single upload gives imgscale 0-3),
 * optionally only album `album` (its display name). Nothing -> `{"success":false}`.
 */
export function listPhotos(ctx: ApiContext): ApiResult {
  const { store } = ctx;
  const album = param(ctx.params, 'album');
  const rows = ownPhotos(ctx).filter((p) => !album || p.album === album);
  if (rows.length === 0) return json({ success: false });
  return json({
    success: true,
    photos: rows.map((p) => ({
      resource_id: p.resource_id,
      created: p.created,
      edited: p.edited,
      title: p.title,
      description: p.description,
      album: p.album,
      filename: p.filename,
      mimetype: p.mimetype,
      height: p.height,
      width: p.width,
      filesize: p.filesize,
      imgscale: p.imgscale,
      photo_usage: p.photo_usage,
      allow_cid: p.allow_cid,
      allow_gid: p.allow_gid,
      deny_cid: p.deny_cid,
      deny_gid: p.deny_gid,
      src: `${store.base}/photo/${p.resource_id}-${p.imgscale}`,
    })),
  });
}

/**
 * photo: `photo_id` (resource_id) and `scale` (default 0) -> `{photo:{…row,
 * content}, item:[…]}`, `item` only when the photo's hidden item exists.
 * Missing or unknown -> empty 200 (err_photo_notfound.txt).
 */
export function photoDetail(ctx: ApiContext): ApiResult {
  const { store, channel } = ctx;
  const id = param(ctx.params, 'photo_id');
  if (!id) return EMPTY_HTML;
  const scale = intParam(ctx.params, 'scale');
  const row = ownPhotos(ctx).find((p) => p.resource_id === id && p.imgscale === scale);
  if (!row) return EMPTY_HTML;
  const out: Record<string, unknown> = { photo: photoWithContent(row, (store.photoData.get(row.id) ?? Buffer.alloc(0)).toString('base64')) };
  const items = store.items.filter((i) => i.uid === channel.channel_id && i.resource_type === 'photo' && i.resource_id === id);
  if (items.length > 0) out.item = items.map((i) => encodeItem(store, i, true));
  return json(out);
}
