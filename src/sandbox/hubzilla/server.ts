/**
 * The built-in Hubzilla simulator (8.8.7, or the 10.x line: versions.ts): the channel API at `/api/z/1.0` plus
 * the OAuth2 token endpoint, over node:http, seeded with the demo data of
 * seed.ts. It answers like the real hub (reference/hubzilla.md and the
 * captures): 200s for most failures, PHP session cookies, JSON numbers.
 * Test switches: request recording, injected faults and latency.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SessionTable, basicLogin, bearerLogin, issueToken, sessionCookie, sessionIdFrom, switchChannel, type Session } from './auth.js';
import { exportChannel, listChannels, verifyChannel } from './channel-export.js';
import { getXchan, listConnectionConfig, listConnections, permAllowed } from './connections.js';
import type { ApiHandler } from './context.js';
import { fileData, fileDetail, fileExport, fileExportPage, fileMeta, listFiles } from './files.js';
import { listGroupMembers, listGroups } from './groups.js';
import { itemUpdate } from './item-update.js';
import { channelStream, itemExportPage, itemFull, networkStream } from './items.js';
import { listAlbums, listPhotos, photoDetail } from './photos.js';
import type { ChannelRow } from './records.js';
import {
  CRASH,
  EMPTY_HTML,
  json,
  type ApiResult,
  writeHtmlNotFound,
  writeNotImplemented,
  writeOAuthJson,
  writeResult,
  writeUnauthorized,
  writeXml,
} from './reply.js';
import { param, parseRequestParams } from './request-params.js';
import { seedStore } from './seed.js';
import type { Store } from './store.js';
import { formBodyOnly, VERSION_STRING, type HubzillaVersion } from './versions.js';

export { DEMO_ACCOUNTS } from './seed.js';

import type { FaultRule, RecordedRequest } from '../http-util.js';
export type { FaultRule, RecordedRequest };

export interface HubzillaSandboxOptions {
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** Delay before every response, in milliseconds; default 0. */
  latencyMs?: number;
  /** Extra text files in folder `Bulk` of channel demo (seed.ts); default 0. */
  bulkFiles?: number;
  /** The Hubzilla release to play (versions.ts): `8.8` (default) or `10`. */
  version?: HubzillaVersion;
}

export interface HubzillaSandbox {
  /** `http://127.0.0.1:PORT`; the API is at `url + '/api/z/1.0'`. */
  url: string;
  /** Every request received, faulted and rejected ones included, in arrival order. */
  requests: RecordedRequest[];
  clearRequests(): void;
  addFault(rule: FaultRule): void;
  clearFaults(): void;
  setLatency(ms: number): void;
  /** Moves the hub's clock on (its time windows: the two minutes of suppress_duplicates, the 14 days of channel/stream). */
  advanceClock(seconds: number): void;
  /** Revokes every OAuth2 token issued so far, as the hub's app settings do: their next call answers 401. */
  revokeTokens(): void;
  /** Stops listening and closes every connection, keep-alive ones included. */
  close(): Promise<void>;
}

const API_PREFIX = '/api/z/1.0/';

/** Endpoints registered by `zot_api_init()` that the sandbox implements (all need a login). */
const ROUTES = new Map<string, ApiHandler>([
  ['verify', verifyChannel],
  ['channel/list', listChannels],
  ['channel/export/basic', exportChannel],
  ['channel/stream', channelStream],
  ['network/stream', networkStream],
  ['files', listFiles],
  ['filedata', fileData],
  ['filemeta', fileMeta],
  ['file', fileDetail],
  ['file/export', fileExport],
  ['file/export_page', fileExportPage],
  ['albums', listAlbums],
  ['photos', listPhotos],
  ['photo', photoDetail],
  ['group', listGroups],
  ['group_members', listGroupMembers],
  ['xchan', getXchan],
  ['abook', listConnections],
  ['abconfig', listConnectionConfig],
  ['perm_allowed', permAllowed],
  ['item/update', itemUpdate],
  ['item/full', itemFull],
  ['item/export_page', itemExportPage],
]);

function delay(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function record(req: IncomingMessage, body: Buffer): RecordedRequest {
  const target = req.url ?? '/';
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  const query: Record<string, string[]> = {};
  for (const [k, v] of new URLSearchParams(q < 0 ? '' : target.slice(q + 1))) (query[k] ??= []).push(v);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  const multipart = (headers['content-type'] ?? '').toLowerCase().startsWith('multipart/');
  return { method: req.method ?? 'GET', path, query, headers, body: body.toString(multipart ? 'latin1' : 'utf8') };
}

function faultMatches(rule: FaultRule, method: string, path: string): boolean {
  if (rule.method && rule.method.toUpperCase() !== method.toUpperCase()) return false;
  if (rule.path === undefined) return true;
  if (rule.path instanceof RegExp) return rule.path.test(path);
  const relative = path.startsWith(API_PREFIX) ? path.slice(API_PREFIX.length) : undefined;
  return rule.path === path || (relative !== undefined && rule.path.replace(/^\//, '') === relative);
}

/** Endpoint name of an API path: `.json`/`.xml` suffixes are accepted and ignored (files_xml_suffix.txt). */
function endpointOf(path: string): { name: string; xml: boolean } {
  let name = decodeURIComponent(path.slice(API_PREFIX.length)).replace(/\/+$/, '');
  let xml = false;
  const m = /^(.*)\.(json|xml)$/.exec(name);
  if (m?.[1]) {
    name = m[1];
    xml = m[2] === 'xml';
  }
  return { name, xml };
}

/** Answers one request against `store` (after recording, faults and latency). */
function serve(store: Store, sessions: SessionTable, req: IncomingMessage, res: ServerResponse, rec: RecordedRequest, body: Buffer): void {
  const method = rec.method.toUpperCase();
  const search = (req.url ?? '').includes('?') ? (req.url ?? '').slice((req.url ?? '').indexOf('?') + 1) : '';
  let params = parseRequestParams(search, body, req.headers['content-type']);

  // PHP starts a session on every request; a known PHPSESSID cookie is reused without a new Set-Cookie.
  const known = sessions.get(sessionIdFrom(req.headers.cookie));
  const session: Session = known ?? sessions.create();
  const once = known ? [] : [sessionCookie(session)];
  // Login paths send the cookie header twice (session_start + regenerate), as every captured API call does.
  const twice = known ? [] : [sessionCookie(session), sessionCookie(session)];

  if (rec.path === '/token' && method === 'POST') {
    const result = issueToken(store, req.headers.authorization, {
      grant_type: param(params, 'grant_type'),
      client_id: param(params, 'client_id'),
      client_secret: param(params, 'client_secret'),
    });
    writeOAuthJson(res, result.status, result.body, once);
    return;
  }
  if (!rec.path.startsWith(API_PREFIX)) {
    writeHtmlNotFound(res, once);
    return;
  }
  const { name, xml } = endpointOf(rec.path);
  if (name === 'version') {
    // The only endpoint without login, and the only one honouring .xml (version_xml.txt, CRLF lines as captured).
    const version = VERSION_STRING[store.version];
    if (xml) writeXml(res, `<?xml version="1.0" encoding="UTF-8"?>\r\n<version>${version}</version>\r\n`, once);
    else writeResult(res, json(version), once);
    return;
  }
  const handler = ROUTES.get(name);
  if (!handler) {
    writeNotImplemented(res, once);
    return;
  }

  // api_user(): an authenticated session wins over any credentials sent (session_cookie_reuse_without_basic.txt).
  let channel: ChannelRow | undefined = session.uid !== null ? store.channelById(session.uid) : undefined;
  let cookies = once;
  if (!channel) {
    const authorization = req.headers.authorization ?? '';
    channel = bearerLogin(store, authorization);
    if (!channel) {
      channel = basicLogin(store, authorization);
      cookies = twice;
    }
    if (!channel) {
      writeUnauthorized(res, twice);
      return;
    }
    session.uid = channel.channel_id;
  }
  const selected = switchChannel(store, channel, param(params, 'channel'));
  // 10.x zot_item_update() copies the form into $_POST: a query string's fields are not read.
  if (name === 'item/update' && formBodyOnly(store.version)) params = parseRequestParams('', body, req.headers['content-type']);
  if (!selected) {
    writeResult(res, EMPTY_HTML, cookies);
    return;
  }
  // change_channel() sticks to the session.
  session.uid = selected.channel_id;
  let result: ApiResult;
  try {
    result = handler({ store, channel: selected, params, method });
  } catch {
    result = CRASH;
  }
  writeResult(res, result, cookies);
}

/** Starts a sandbox with freshly seeded state on `options.host:options.port`. */
export async function startHubzillaSandbox(options: HubzillaSandboxOptions = {}): Promise<HubzillaSandbox> {
  const { store } = seedStore({ bulkFiles: options.bulkFiles ?? 0, version: options.version ?? '8.8' });
  const sessions = new SessionTable();
  const requests: RecordedRequest[] = [];
  const faults: FaultRule[] = [];
  let latencyMs = options.latencyMs ?? 0;

  const server = createServer((req, res) => {
    void (async () => {
      let body: Buffer;
      try {
        body = await readBody(req);
      } catch {
        return;
      }
      const rec = record(req, body);
      requests.push(rec);
      const fault = faults.find((f) => faultMatches(f, rec.method, rec.path));
      if (fault) {
        if (fault.times !== undefined) {
          fault.times -= 1;
          if (fault.times <= 0) faults.splice(faults.indexOf(fault), 1);
        }
        await delay(latencyMs);
        await delay(fault.delayMs ?? 0);
        if (fault.until) await fault.until.catch(() => {});
        if (fault.hang) return;
        if (fault.reset) {
          req.socket.destroy();
          return;
        }
        if (fault.serve) {
          serve(store, sessions, req, res, rec, body);
          return;
        }
        if (res.destroyed) return;
        const payload = fault.body ?? '';
        res.writeHead(fault.status ?? 500, { 'Content-Length': String(Buffer.byteLength(payload)), ...fault.headers });
        res.end(payload);
        return;
      }
      await delay(latencyMs);
      if (res.destroyed) return;
      serve(store, sessions, req, res, rec, body);
    })();
  });

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${port}`,
    requests,
    clearRequests: () => {
      requests.length = 0;
    },
    addFault: (rule) => {
      faults.push({ ...rule });
    },
    clearFaults: () => {
      faults.length = 0;
    },
    setLatency: (ms) => {
      latencyMs = ms;
    },
    advanceClock: (seconds) => store.clock.advance(seconds),
    revokeTokens: () => store.oauthTokens.clear(),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
