/**
 * Binary routes: job traces, artifact archives and files, and repository
 * snapshots, streamed from GitLab to the caller with constant memory and
 * the caller's own credentials. Only the GitLab paths listed here are
 * reachable; each segment is decoded once and encoded again on the way up.
 * Upstream 4xx answers reach the caller unchanged.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InputError, UpstreamError } from '../errors.js';
import { GITLAB_DOWNLOAD_PREFIX } from '../schema/gitlab/download-paths.js';
import { restIdOf } from '../schema/global-id.js';
import { GitlabClient } from '../upstreams/gitlab/client.js';
import type { RequestScope } from '../request-scope.js';
import type { HttpClient } from '../upstreams/http.js';
import { gitlabCredentials } from './credentials.js';

/** GitLab download paths below /projects/:id, as patterns over decoded segments; `*` takes the rest. */
const ROUTES: readonly (readonly string[])[] = [
  ['jobs', ':n', 'trace'],
  ['jobs', ':n', 'artifacts'],
  ['jobs', ':n', 'artifacts', '*'],
  ['jobs', 'artifacts', ':s', 'download'],
  ['jobs', 'artifacts', ':s', 'raw', '*'],
  ['snapshot'],
];

/** Query parameters GitLab reads on these routes; `job_token` is turned into a header. */
const QUERY_PARAMS = ['job', 'wiki'];

/**
 * `location` carries GitLab's redirect to object storage (artifacts kept there
 * with direct download on): the caller follows it; the gateway contacts no
 * host but GitLab's.
 */
const PASSED_HEADERS = [
  'content-type',
  'content-length',
  'content-disposition',
  'content-range',
  'accept-ranges',
  'etag',
  'last-modified',
  'cache-control',
  'location',
];

function matches(route: readonly string[], segments: readonly string[]): boolean {
  for (let i = 0; i < route.length; i++) {
    const part = route[i];
    const segment = segments[i];
    if (part === '*') return segments.length > i && segments.slice(i).every((s) => s.length > 0);
    if (segment === undefined) return false;
    if (part === ':n' && restIdOf(segment) === null) return false;
    if (part === ':s' && segment.length === 0) return false;
    if (part !== ':n' && part !== ':s' && part !== segment) return false;
  }
  return segments.length === route.length;
}

function decodeSegments(path: string): string[] | null {
  try {
    return path.split('/').map((s) => decodeURIComponent(s));
  } catch {
    return null;
  }
}

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ errors: [{ message, extensions: { code } }] }));
}

const TRANSPORT_STATUS: Readonly<Record<string, number>> = { UPSTREAM_TIMEOUT: 504, UPSTREAM_UNAVAILABLE: 502, UPSTREAM_ERROR: 502 };

/** Handles a request below /downloads/gitlab/; returns false for any other path. */
export function handleDownload(req: IncomingMessage, res: ServerResponse, gitlab: HttpClient, scope?: RequestScope): boolean {
  const url = new URL(req.url ?? '/', 'http://gateway');
  if (!url.pathname.startsWith(`${GITLAB_DOWNLOAD_PREFIX}/`)) return false;
  void serveDownload(req, res, gitlab, url, scope);
  return true;
}

async function serveDownload(req: IncomingMessage, res: ServerResponse, gitlab: HttpClient, url: URL, scope?: RequestScope): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return sendError(res, 405, 'BAD_USER_INPUT', 'Downloads are read with GET.');
  }
  const segments = decodeSegments(url.pathname.slice(GITLAB_DOWNLOAD_PREFIX.length + 1));
  const [projects, projectId, ...rest] = segments ?? [];
  if (!segments || projects !== 'projects' || !projectId || !ROUTES.some((route) => matches(route, rest)) || rest.some((s) => s.includes('\0'))) {
    return sendError(res, 404, 'NOT_FOUND', 'No such download route.');
  }
  let credentials: Record<string, string>;
  try {
    credentials = gitlabCredentials(new Headers(req.headers as Record<string, string>), url);
  } catch (error) {
    if (error instanceof InputError) return sendError(res, 400, error.code, error.message);
    throw error;
  }
  const abort = new AbortController();
  // The caller hanging up stops the upstream download too.
  res.once('close', () => abort.abort());
  const client = new GitlabClient(gitlab, credentials, abort.signal, scope);
  const query: Record<string, string> = {};
  for (const name of QUERY_PARAMS) {
    const value = url.searchParams.get(name);
    if (value !== null) query[name] = value;
  }
  const range = typeof req.headers.range === 'string' ? req.headers.range : undefined;
  try {
    await client.relay(['projects', projectId, ...rest], query, range, (upstream) => {
      // GitLab's 5xx body is not the caller's to read (stack traces, internal names, anyone's tokens):
      // the same status, with the gateway's own short error.
      if (upstream.status >= 500) {
        sendError(res, upstream.status, 'UPSTREAM_ERROR', `GitLab answered ${upstream.status}.`);
        return null;
      }
      const headers: Record<string, string> = {};
      for (const name of PASSED_HEADERS) {
        const value = upstream.headers[name];
        if (value !== undefined) headers[name] = value;
      }
      res.writeHead(upstream.status, headers);
      return req.method === 'HEAD' ? null : res;
    });
    res.end();
  } catch (error) {
    // The upstream broke off mid-stream or the caller left: the truncated
    // response ends without its last chunk, so the caller sees the failure.
    if (res.headersSent) return void res.destroy();
    if (error instanceof UpstreamError) return sendError(res, TRANSPORT_STATUS[error.code] ?? 502, error.code, error.message);
    return sendError(res, 500, 'INTERNAL_SERVER_ERROR', 'Unexpected error.');
  }
}
