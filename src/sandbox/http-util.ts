/**
 * Small HTTP helpers shared by the sandbox simulators. node: builtins only:
 * the sandboxes import nothing from the rest of src/.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** A JSON response a handler returns; the server writes it. */
export interface JsonResponse {
  status: number;
  /** Serialised with JSON.stringify; `undefined` sends an empty body. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** Splits a raw request target into its still-encoded path and its query string. */
export function splitTarget(target: string): { path: string; search: string } {
  const q = target.indexOf('?');
  return q < 0 ? { path: target, search: '' } : { path: target.slice(0, q), search: target.slice(q + 1) };
}

/**
 * Parses a query string the way Rack does for plain keys: every value of a
 * repeated key is kept in order, `+` is a space. Keys keep their brackets
 * (`scope[]`, `custom_attributes[key]`).
 */
export function parseQuery(search: string): Record<string, string[]> {
  const query: Record<string, string[]> = {};
  for (const [key, value] of new URLSearchParams(search)) {
    (query[key] ??= []).push(value);
  }
  return query;
}

/** The request's headers with lower-case names, repeated values joined by ", ". */
export function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** Writes a JSON response (Content-Type application/json) unless the socket is gone. */
export function writeJson(res: ServerResponse, response: JsonResponse): void {
  if (res.destroyed || res.writableEnded) return;
  const payload = response.body === undefined ? '' : JSON.stringify(response.body);
  res.writeHead(response.status, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(payload)),
    ...response.headers,
  });
  res.end(payload);
}

/**
 * What Rails' Rack::ETag and Rack::ConditionalGet do to a GitLab API answer
 * (GitLab's config/routes.rb mounts its Grape API, `mount API::API`, inside
 * the Rails router, behind Rails' default middleware, which has both): a 200 to a GET
 * gets a weak ETag of its body (the first 32 hex digits of its SHA-256) and
 * `Cache-Control: max-age=0, private, must-revalidate`; when the request's
 * If-None-Match names that ETag, the answer is a 304 without a body. The
 * route still runs in full: a 304 saves the transfer, not GitLab's work.
 */
export function conditionalGet(method: string, requestHeaders: Readonly<Record<string, string>>, response: JsonResponse): JsonResponse {
  if (method !== 'GET' || response.status !== 200 || response.body === undefined || response.headers?.ETag) return response;
  const etag = `W/"${createHash('sha256').update(JSON.stringify(response.body)).digest('hex').slice(0, 32)}"`;
  const headers = { ...response.headers, ETag: etag, 'Cache-Control': 'max-age=0, private, must-revalidate' };
  const presented = (requestHeaders['if-none-match'] ?? '').split(/\s*,\s*/);
  if (presented.includes(etag) || presented.includes('*')) return { status: 304, headers };
  return { ...response, headers };
}

/** Resolves after `ms` milliseconds (at once for 0 or less). */
export function delay(ms: number): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A streamed (binary) response a handler returns; the server pipes `open()` into the socket. */
export interface StreamResponse {
  status: number;
  headers: Record<string, string>;
  /** Opens the body; called once, after latency, only when the client is still there. */
  open(): Readable;
}

/** Either kind of response a sandbox handler returns. */
export type HandlerResponse = JsonResponse | StreamResponse;

export function isStreamResponse(response: HandlerResponse): response is StreamResponse {
  return 'open' in response;
}

/**
 * Pipes a streamed response into `res`. A body stream that fails mid-way
 * destroys the socket, so the client sees a truncated transfer rather than
 * a clean end, as it would from a real server dying mid-download.
 */
export function writeStream(res: ServerResponse, response: StreamResponse): void {
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(response.status, response.headers);
  const body = response.open();
  pipeline(body, res).catch(() => {
    res.destroy();
  });
}

/** A file part of a multipart/form-data body. */
export interface UploadedFile {
  filename: string;
  contentType: string;
  content: Buffer;
}

/** A request body decoded into Rack-style flat parameters plus uploaded files. */
export interface ParsedBody {
  /** Parameter name (brackets kept: `tag_list[]`, `custom_attributes[key]`) to its values in order. */
  fields: Record<string, string[]>;
  files: Record<string, UploadedFile>;
}

/** Thrown for a body the sandbox cannot decode; the server answers 400. */
export class BodyError extends Error {}

/** Reads the whole request body, failing with BodyError beyond `limit` bytes. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyError(`request body exceeds ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * Decodes a body the way Rack and Grape do: application/json (nested
 * objects become `name[key]`, arrays `name[]`, scalars their string form,
 * null an empty value), application/x-www-form-urlencoded, and
 * multipart/form-data (file parts go to `files`). Anything else is ignored.
 */
export function parseBody(contentType: string | undefined, body: Buffer): ParsedBody {
  const parsed: ParsedBody = { fields: {}, files: {} };
  if (body.length === 0) return parsed;
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'application/json' || type.endsWith('+json')) {
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      throw new BodyError('invalid JSON body');
    }
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value)) flattenJson(parsed.fields, key, inner);
    }
  } else if (type === 'application/x-www-form-urlencoded') {
    parsed.fields = parseQuery(body.toString('utf8'));
  } else if (type === 'multipart/form-data') {
    const boundary = /boundary="?([^";]+)"?/i.exec(contentType ?? '')?.[1];
    if (!boundary) throw new BodyError('multipart body without boundary');
    parseMultipart(body, boundary, parsed);
  }
  return parsed;
}

function flattenJson(fields: Record<string, string[]>, key: string, value: unknown): void {
  if (Array.isArray(value)) {
    // An array of hashes is `name[][key]`; scalars are `name[]`.
    if (value.length === 0) fields[`${key}[]`] ??= [];
    for (const item of value) flattenJson(fields, `${key}[]`, item);
  } else if (value !== null && typeof value === 'object') {
    for (const [inner, innerValue] of Object.entries(value)) flattenJson(fields, `${key}[${inner}]`, innerValue);
  } else {
    (fields[key] ??= []).push(value === null || value === undefined ? '' : String(value));
  }
}

function parseMultipart(body: Buffer, boundary: string, parsed: ParsedBody): void {
  const delimiter = Buffer.from(`--${boundary}`);
  let position = body.indexOf(delimiter);
  if (position < 0) throw new BodyError('multipart boundary not found');
  for (;;) {
    position += delimiter.length;
    // `--` after a delimiter closes the body.
    if (body.subarray(position, position + 2).toString() === '--') return;
    const headerEnd = body.indexOf('\r\n\r\n', position);
    if (headerEnd < 0) throw new BodyError('truncated multipart part');
    const next = body.indexOf(delimiter, headerEnd + 4);
    if (next < 0) throw new BodyError('unterminated multipart body');
    const headers = body.subarray(position, headerEnd).toString('utf8');
    // The part's content ends with the CRLF that precedes the next delimiter.
    const content = body.subarray(headerEnd + 4, next - 2);
    const disposition = /content-disposition:([^\r\n]*)/i.exec(headers)?.[1] ?? '';
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
    const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
    if (name !== undefined) {
      if (filename !== undefined) {
        const partType = /content-type:\s*([^\r\n]*)/i.exec(headers)?.[1]?.trim() ?? 'application/octet-stream';
        parsed.files[name] = { filename, contentType: partType, content: Buffer.from(content) };
      } else {
        (parsed.fields[name] ??= []).push(content.toString('utf8'));
      }
    }
    position = next;
  }
}

/** One request as a sandbox received it. */
export interface RecordedRequest {
  method: string;
  /** Raw path as received, still percent-encoded, without the query. */
  path: string;
  query: Record<string, string[]>;
  /** Header names in lower case; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The raw request body as text; '' when there is none. */
  body: string;
  /** The id the server sent back in its own `X-Request-Id` (GitLab's correlation id); none for a server that sends none. */
  responseRequestId?: string;
}

/**
 * A fault to inject into matching requests (all given conditions must match).
 * The rule first waits `delayMs`; then `reset` destroys the socket, `hang`
 * never answers, and `status`/`body`/`headers` answer with that response
 * (each sandbox documents its defaults). A rule with only `delayMs` slows
 * matching requests and lets them through.
 */
export interface FaultRule {
  method?: string;
  /** A string matches the raw path (see each sandbox for aliases); a RegExp is tested against the raw path. */
  path?: RegExp | string;
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  delayMs?: number;
  /** Holds the answer until this settles: a test lets it go once it has seen what it waits for, with no clock involved. */
  until?: Promise<unknown>;
  /** Never respond. */
  hang?: boolean;
  /** Destroy the socket (TCP reset). */
  reset?: boolean;
  /** After the delay, serve the request as usual instead of a fault's answer, even when the caller gave up: a slow upstream that applies a write late. */
  serve?: boolean;
  /** How many requests the rule applies to; default Infinity. */
  times?: number;
}
