/**
 * The Hubzilla download routes, with their content type, Content-Length and
 * single-range `Range` support; credentials come from X-Hubzilla-Authorization.
 *
 * - `GET /downloads/hubzilla/files/<hash>?channel=<nick>` streams a stored
 *   file. Hubzilla only hands out files as base64 inside JSON (`filedata`,
 *   whose `file` sibling reads the whole file into memory on the hub and
 *   would here too), so the route reads bounded chunks one after another
 *   and writes each as it arrives: memory stays constant whatever the size.
 * - `GET /downloads/hubzilla/photos/<resource id>/<scale>?channel=<nick>`
 *   serves one size of a photo. The original (scale 0) is the photo's file
 *   and streams as above; the smaller sizes exist only in `photo`, which
 *   answers with the whole image, at most a few hundred KB.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { once } from 'node:events';
import { InputError, UpstreamError } from '../errors.js';
import { HUBZILLA_DOWNLOAD_PREFIX, HUBZILLA_PHOTO_PREFIX } from '../schema/hubzilla/download-paths.js';
import { checkFileHash, checkNickname, HubzillaClient } from '../upstreams/hubzilla/client.js';
import type { RequestScope } from '../request-scope.js';
import type { HttpClient } from '../upstreams/http.js';
import type { PhotoContentRecord } from '../upstreams/hubzilla/records.js';
import { LRUCache } from 'lru-cache';
import { hubzillaCredentials } from './credentials.js';
import { hubzillaCredentialFrom } from './hubzilla-context.js';

/** Bytes asked of filedata per call: about 700 KB of JSON each, so memory stays bounded. */
export const HUBZILLA_CHUNK_BYTES = 512 * 1024;

const STATUS: Readonly<Record<string, number>> = {
  BAD_USER_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  UPSTREAM_TIMEOUT: 504,
  UPSTREAM_RATE_LIMITED: 503,
};

function sendError(res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ errors: [{ message, extensions: { code } }] }));
}

/** A single `bytes=` range over `size` bytes: [first, last] inclusive, 'none' without a header, null when unsatisfiable. */
export function parseRange(header: string | undefined, size: number): [number, number] | 'none' | null {
  if (header === undefined) return 'none';
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  // Multiple ranges and other units are served whole, as RFC 9110 allows.
  if (!match || (match[1] === '' && match[2] === '')) return 'none';
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return null;
    return [Math.max(0, size - suffix), size - 1];
  }
  const first = Number(match[1]);
  const last = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (first >= size || last < first) return null;
  return [first, last];
}

/** A content type safe to send as a header; octet-stream for anything odd. */
function contentType(filetype: string): string {
  return /^[A-Za-z0-9][\w.+-]*\/[\w.+-]+$/.test(filetype) ? filetype : 'application/octet-stream';
}

/** Handles a request below /downloads/hubzilla/files/ or /downloads/hubzilla/photos/; returns false for any other path. */
export function handleHubzillaDownload(req: IncomingMessage, res: ServerResponse, hubzilla: HttpClient | null, scope?: RequestScope): boolean {
  const url = new URL(req.url ?? '/', 'http://gateway');
  if (!url.pathname.startsWith(`${HUBZILLA_DOWNLOAD_PREFIX}/`) && !url.pathname.startsWith(`${HUBZILLA_PHOTO_PREFIX}/`)) return false;
  void serve(req, res, hubzilla, url, scope).catch(() => {
    if (!res.headersSent) sendError(res, 500, 'INTERNAL_SERVER_ERROR', 'Unexpected error.');
    else res.destroy();
  });
  return true;
}

async function serve(req: IncomingMessage, res: ServerResponse, hubzilla: HttpClient | null, url: URL, scope?: RequestScope): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return sendError(res, 405, 'BAD_USER_INPUT', 'Downloads are read with GET.', { allow: 'GET, HEAD' });
  }
  const abort = new AbortController();
  // The caller hanging up stops the chunk loop and the call in flight.
  res.once('close', () => abort.abort());
  let client: HubzillaClient;
  let hash: string;
  let scale = 0;
  try {
    const photo = url.pathname.startsWith(`${HUBZILLA_PHOTO_PREFIX}/`);
    const rest = url.pathname.slice((photo ? HUBZILLA_PHOTO_PREFIX : HUBZILLA_DOWNLOAD_PREFIX).length + 1);
    const [raw = '', scaleText, ...extra] = rest.split('/');
    if (photo) {
      // Hubzilla's scales: 0 the original, 1-3 smaller copies, 4-6 profile and 7 cover photo sizes.
      if (extra.length > 0 || !scaleText || !/^[0-7]$/.test(scaleText)) throw new InputError('The photo scale must be a number from 0 to 7.', ['scale']);
      scale = Number(scaleText);
    } else if (scaleText !== undefined) {
      throw new InputError('The file hash is not valid.', ['hash']);
    }
    let decoded: string;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      throw new InputError('The file hash is not valid.', ['hash']);
    }
    hash = checkFileHash(decoded);
    const channel = url.searchParams.get('channel');
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    client = new HubzillaClient(hubzilla, hubzillaCredentials(hubzillaCredentialFrom(headers)), abort.signal, null, scope).forChannel(
      channel === null || channel === '' ? null : checkNickname(channel, 'channel'),
    );
  } catch (error) {
    if (error instanceof InputError) return sendError(res, 400, error.code, error.message);
    throw error;
  }
  try {
    if (scale > 0) return await servePhoto(req, res, client, hash, scale, hubzilla);
    const file = await client.getFile(hash);
    if (!file || file.is_dir) return sendError(res, 404, 'NOT_FOUND', 'No such file.');
    const size = file.filesize;
    const range = parseRange(typeof req.headers.range === 'string' ? req.headers.range : undefined, size);
    if (range === null) return sendError(res, 416, 'BAD_USER_INPUT', 'The range is outside the file.', { 'content-range': `bytes */${size}` });
    const [first, last] = range === 'none' ? [0, size - 1] : range;
    const length = Math.max(0, last - first + 1);
    const headers: Record<string, string> = {
      'content-type': contentType(file.filetype),
      'content-length': String(length),
      'accept-ranges': 'bytes',
      'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(file.filename || hash)}`,
      'cache-control': 'private, no-store',
      'x-content-type-options': 'nosniff',
    };
    if (range !== 'none') headers['content-range'] = `bytes ${first}-${last}/${size}`;
    res.writeHead(range === 'none' ? 200 : 206, headers);
    if (req.method === 'HEAD' || length === 0) {
      res.end();
      return;
    }
    for (let position = first; position <= last; ) {
      const want = Math.min(HUBZILLA_CHUNK_BYTES, last - position + 1);
      const chunk = await client.getFileData(hash, position, want);
      const bytes = chunk ? Buffer.from(chunk.content, 'base64') : null;
      // A chunk that is missing, misplaced or short means the file changed or the hub failed:
      // the response breaks off, so the caller sees a truncated download rather than wrong bytes.
      if (!chunk || !bytes || chunk.start !== position || bytes.length !== want) {
        res.destroy();
        return;
      }
      position += want;
      if (!res.write(bytes)) await once(res, 'drain', { signal: abort.signal });
    }
    res.end();
  } catch (error) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (error instanceof UpstreamError || error instanceof InputError) {
      return sendError(res, STATUS[error.code] ?? 502, error.code, error.message);
    }
    throw error;
  }
}

/** How long a smaller size of a photo read whole is kept to serve the ranges a viewer asks next. */
const PHOTO_KEPT_MS = 30_000;
/** Bytes of photo sizes kept per Hubzilla upstream; a size above a tenth of it is not kept. */
const PHOTO_KEPT_BYTES = 32 * 1024 * 1024;

/** Photo sizes read lately, per upstream (its HTTP client), by the caller's scope: never served to another channel or login. */
const photoTables = new WeakMap<object, LRUCache<string, PhotoContentRecord>>();

function photoTable(upstream: object): LRUCache<string, PhotoContentRecord> {
  let table = photoTables.get(upstream);
  if (!table) {
    table = new LRUCache<string, PhotoContentRecord>({
      maxSize: PHOTO_KEPT_BYTES,
      maxEntrySize: Math.floor(PHOTO_KEPT_BYTES / 10),
      sizeCalculation: (photo) => Math.max(1, photo.content.length),
      ttl: PHOTO_KEPT_MS,
    });
    photoTables.set(upstream, table);
  }
  return table;
}

/**
 * One smaller size of a photo: `photo` sends the whole image, so it is
 * decoded once and the range cut from it. What was read is kept for 30 s for
 * the caller's scope (the channel the hub verified, else the credential), so
 * a viewer reading it in ranges costs one read, not one per range.
 */
async function servePhoto(
  req: IncomingMessage,
  res: ServerResponse,
  client: HubzillaClient,
  resourceId: string,
  scale: number,
  upstream: object | null,
): Promise<void> {
  const scope = client.cacheScope;
  const table = upstream === null || scope === null ? null : photoTable(upstream);
  const key = `${scope} ${client.channel ?? ''} ${resourceId} ${scale}`;
  const kept = table?.get(key);
  const photo = kept ?? (await client.getPhoto(resourceId, scale));
  if (photo && table && !kept) table.set(key, photo);
  if (!photo) return sendError(res, 404, 'NOT_FOUND', 'No such photo, or no such size of it.');
  const bytes = Buffer.from(photo.content, 'base64');
  const range = parseRange(typeof req.headers.range === 'string' ? req.headers.range : undefined, bytes.length);
  if (range === null) return sendError(res, 416, 'BAD_USER_INPUT', 'The range is outside the photo.', { 'content-range': `bytes */${bytes.length}` });
  const [first, last] = range === 'none' ? [0, bytes.length - 1] : range;
  const headers: Record<string, string> = {
    'content-type': contentType(photo.mimetype),
    'content-length': String(Math.max(0, last - first + 1)),
    'accept-ranges': 'bytes',
    // An attachment, like files: an uploaded SVG must not run as a page of the gateway's origin.
    'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(photo.filename || resourceId)}`,
    'cache-control': 'private, no-store',
    'x-content-type-options': 'nosniff',
  };
  if (range !== 'none') headers['content-range'] = `bytes ${first}-${last}/${bytes.length}`;
  res.writeHead(range === 'none' ? 200 : 206, headers);
  res.end(req.method === 'HEAD' ? undefined : bytes.subarray(first, last + 1));
}
