/**
 * The one HTTP client every upstream goes through, and the only importer of
 * undici: a keep-alive Pool per upstream, timeouts and a response size cap,
 * path segments always encoded, the caller's credentials forwarded as headers,
 * upstream failures mapped to the closed error code set, and a call counter.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { Pool, errors as undiciErrors } from 'undici';
import type { Dispatcher } from 'undici';
import { UpstreamError, type ErrorCode, type UpstreamInfo } from '../errors.js';

export interface HttpClientOptions {
  /** Upstream name shown in errors and metrics, e.g. "gitlab". */
  name: string;
  /** Origin plus base path, e.g. https://gitlab.example.com/api/v4. */
  baseUrl: URL;
  /** Headers and body timeout of one call, in ms. */
  timeoutMs: number;
  /** Keep-alive connections in the pool. */
  connections: number;
  /** Bodies larger than this fail with UPSTREAM_ERROR. */
  maxResponseBytes: number;
}

/** A path given as segments; each one is encoded, so `a/b` becomes `a%2Fb`. */
export type PathSegments = readonly (string | number)[];

export type QueryValue = string | number | boolean | readonly (string | number)[] | null | undefined;

export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: PathSegments;
  query?: Readonly<Record<string, QueryValue>>;
  /** Credential headers to forward, already in their upstream form. */
  headers?: Readonly<Record<string, string>>;
  /** A JSON body; a FormData body, sent as multipart and streamed; or URLSearchParams, sent form-encoded. */
  body?: unknown;
  signal?: AbortSignal;
}

/** What a multipart file part needs: web Blobs and the File objects Yoga's multipart parser makes both fit. */
export interface BlobLike {
  readonly type: string;
  stream(): AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>;
}

/** One part of a multipart body: a text field, or a file streamed from its Blob. */
export type FormPart = { name: string; value: string } | { name: string; file: BlobLike; filename: string };

/** A multipart/form-data body, written part by part as it is sent: files are streamed, never copied whole. */
export class MultipartBody {
  readonly boundary = `----duograph${randomBytes(12).toString('hex')}`;
  constructor(readonly parts: readonly FormPart[]) {}

  get contentType(): string {
    return `multipart/form-data; boundary=${this.boundary}`;
  }

  toStream(): Readable {
    const { boundary, parts } = this;
    // Quotes and line breaks in names are percent-encoded, as browsers do.
    const quote = (text: string) => text.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
    async function* generate(): AsyncGenerator<Uint8Array> {
      for (const part of parts) {
        if ('file' in part) {
          const type = part.file.type || 'application/octet-stream';
          yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quote(part.name)}"; filename="${quote(part.filename)}"\r\nContent-Type: ${type.replace(/[\r\n]/g, '')}\r\n\r\n`);
          yield* part.file.stream() as AsyncIterable<Uint8Array>;
          yield Buffer.from('\r\n');
        } else {
          yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quote(part.name)}"\r\n\r\n${part.value}\r\n`);
        }
      }
      yield Buffer.from(`--${boundary}--\r\n`);
    }
    return Readable.from(generate());
  }
}

/** A multipart body for UpstreamRequest.body. */
export function multipartBody(parts: readonly FormPart[]): MultipartBody {
  return new MultipartBody(parts);
}

export interface StreamResponse {
  status: number;
  headers: Readonly<Record<string, string | undefined>>;
  /** The upstream body; the caller must consume or destroy it. */
  body: Dispatcher.ResponseData['body'];
}

/** A whole response body read as text, whatever the status (see HttpClient.text). */
export interface TextResponse {
  status: number;
  headers: Readonly<Record<string, string | undefined>>;
  text: string;
  /** Where the call went, with its status: for errors the caller builds from the body. */
  info: UpstreamInfo;
}

export interface UpstreamResponse<T> {
  status: number;
  headers: Readonly<Record<string, string | undefined>>;
  body: T;
}

/** Encodes each segment, so ids that are paths (`group/project`) and `../` stay inside the API path. */
export function encodePath(segments: PathSegments): string {
  return segments.map((s) => encodeURIComponent(String(s))).join('/');
}

/** Serialises query parameters the way GitLab reads them: arrays as repeated `name[]=`. */
export function encodeQuery(query: Readonly<Record<string, QueryValue>> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const v of value) params.append(`${key}[]`, String(v));
    else params.append(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

const STATUS_CODES: Readonly<Record<number, ErrorCode>> = {
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  429: 'UPSTREAM_RATE_LIMITED',
};

/** The error code for an upstream HTTP status that is not a success. */
export function codeForStatus(status: number): ErrorCode {
  const code = STATUS_CODES[status];
  if (code) return code;
  if (status >= 500) return 'UPSTREAM_ERROR';
  if (status >= 400) return 'BAD_USER_INPUT';
  return 'UPSTREAM_ERROR';
}

/** A short human text from an upstream error body (`message` or `error`), never longer than 300 chars. */
export function upstreamMessage(body: unknown): string | null {
  if (body && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    const text = record.message ?? record.error_description ?? record.error;
    if (typeof text === 'string') return text.slice(0, 300);
    if (text && typeof text === 'object') return JSON.stringify(text).slice(0, 300);
  }
  return null;
}

/** Maps an error thrown by undici (or an abort) to the closed code set. */
export function codeForTransportError(error: unknown): ErrorCode {
  if (
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError ||
    error instanceof undiciErrors.ConnectTimeoutError ||
    (error instanceof Error && error.name === 'TimeoutError')
  ) {
    return 'UPSTREAM_TIMEOUT';
  }
  if (error instanceof undiciErrors.ResponseExceededMaxSizeError) return 'UPSTREAM_ERROR';
  return 'UPSTREAM_UNAVAILABLE';
}

const TRANSPORT_MESSAGES: Readonly<Record<ErrorCode, string>> = {
  UPSTREAM_TIMEOUT: 'did not answer in time',
  UPSTREAM_UNAVAILABLE: 'could not be reached',
  UPSTREAM_ERROR: 'sent a response that could not be read',
  UNAUTHENTICATED: 'refused the credentials',
  FORBIDDEN: 'refused the request',
  NOT_FOUND: 'has no such resource',
  BAD_USER_INPUT: 'rejected the request',
  UPSTREAM_RATE_LIMITED: 'is rate limiting requests',
};

export class HttpClient {
  readonly name: string;
  readonly baseUrl: URL;
  /** Calls sent to this upstream since start, successful or not. */
  calls = 0;
  private readonly pool: Pool;
  private readonly basePath: string;
  private readonly timeoutMs: number;
  // The cap applies to JSON bodies only: binary downloads stream through, whatever their size.
  private readonly maxResponseBytes: number;

  constructor(options: HttpClientOptions) {
    this.name = options.name;
    this.baseUrl = options.baseUrl;
    this.timeoutMs = options.timeoutMs;
    this.basePath = options.baseUrl.pathname.replace(/\/+$/, '');
    // undici's defaults are 300 s timeouts and unlimited bodies; both are set here.
    this.pool = new Pool(options.baseUrl.origin, {
      connections: options.connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connectTimeout: Math.min(options.timeoutMs, 10_000),
    });
    this.maxResponseBytes = options.maxResponseBytes;
  }

  /** Sends one call and parses a JSON body; any status >= 300 throws an UpstreamError. */
  async json<T>(request: UpstreamRequest): Promise<UpstreamResponse<T>> {
    const path = `${this.basePath}/${encodePath(request.path)}`;
    const info: UpstreamInfo = { name: this.name, status: null, method: request.method, path };
    const signal = request.signal
      ? AbortSignal.any([request.signal, AbortSignal.timeout(this.timeoutMs)])
      : AbortSignal.timeout(this.timeoutMs);
    const headers: Record<string, string> = { accept: 'application/json', ...request.headers };
    const response = await this.send(request, path, headers, signal, info);
    info.status = response.statusCode;
    let text: string;
    try {
      text = await readCapped(response.body, this.maxResponseBytes);
    } catch (error) {
      if (error instanceof UpstreamError) throw new UpstreamError(`${this.label()} sent a body larger than ${this.maxResponseBytes} bytes.`, 'UPSTREAM_ERROR', info);
      const code = codeForTransportError(error);
      throw new UpstreamError(`${this.label()} ${TRANSPORT_MESSAGES[code]}.`, code, info);
    }
    let body: unknown = null;
    let parsed = true;
    if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        parsed = false;
      }
    }
    const status = response.statusCode;
    if (status >= 300 && status !== 304) {
      const code = codeForStatus(status);
      const detail = parsed ? redact(upstreamMessage(body), request.headers) : null;
      throw new UpstreamError(
        `${this.label()} answered ${status}${detail ? `: ${detail}` : ''}.`,
        code,
        info,
        parsed ? body : null,
      );
    }
    if (!parsed) {
      throw new UpstreamError(`${this.label()} sent a body that is not JSON.`, 'UPSTREAM_ERROR', info);
    }
    return { status, headers: flattenHeaders(response.headers), body: body as T };
  }

  /**
   * Sends one call and reads the whole body as text, whatever the status, for
   * upstreams that report failures in 200 bodies (Hubzilla: empty, `false`,
   * `{"success":false}`). Only transport failures and oversize bodies throw.
   */
  async text(request: UpstreamRequest & { accept?: string }): Promise<TextResponse> {
    const path = `${this.basePath}/${encodePath(request.path)}`;
    const info: UpstreamInfo = { name: this.name, status: null, method: request.method, path };
    const signal = request.signal
      ? AbortSignal.any([request.signal, AbortSignal.timeout(this.timeoutMs)])
      : AbortSignal.timeout(this.timeoutMs);
    const headers: Record<string, string> = { accept: request.accept ?? 'application/json', ...request.headers };
    const response = await this.send(request, path, headers, signal, info);
    info.status = response.statusCode;
    try {
      const text = await response.body.text();
      return { status: response.statusCode, headers: flattenHeaders(response.headers), text, info };
    } catch (error) {
      const code = codeForTransportError(error);
      throw new UpstreamError(`${this.label()} ${TRANSPORT_MESSAGES[code]}.`, code, info);
    }
  }

  /**
   * Sends one call and hands back the body as a stream, whatever the status:
   * binary routes pass upstream 4xx bodies to the caller unchanged. Only
   * transport failures throw. The timeout covers the headers; the body may
   * take as long as it keeps flowing (undici's body timeout is per chunk).
   */
  async stream(request: UpstreamRequest & { accept?: string; range?: string }): Promise<StreamResponse> {
    const path = `${this.basePath}/${encodePath(request.path)}`;
    const info: UpstreamInfo = { name: this.name, status: null, method: request.method, path };
    const headers: Record<string, string> = { accept: request.accept ?? '*/*', ...request.headers };
    if (request.range) headers.range = request.range;
    const response = await this.send(request, path, headers, request.signal, info);
    return { status: response.statusCode, headers: flattenHeaders(response.headers), body: response.body };
  }

  private async send(
    request: UpstreamRequest,
    path: string,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
    info: UpstreamInfo,
  ): Promise<Dispatcher.ResponseData> {
    let body: string | Readable | undefined;
    if (request.body instanceof MultipartBody) {
      body = request.body.toStream();
      headers['content-type'] = request.body.contentType;
    } else if (request.body instanceof URLSearchParams) {
      body = request.body.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (request.body !== undefined) {
      body = JSON.stringify(request.body);
      headers['content-type'] = 'application/json';
    }
    this.calls++;
    try {
      return await this.pool.request({ method: request.method, path: path + encodeQuery(request.query), headers, body, signal });
    } catch (error) {
      const code = codeForTransportError(error);
      throw new UpstreamError(`${this.label()} ${TRANSPORT_MESSAGES[code]}.`, code, info);
    }
  }

  /** Closes the pool's connections. */
  async close(): Promise<void> {
    await this.pool.close();
  }

  private label(): string {
    return this.name === 'gitlab' ? 'GitLab' : this.name === 'hubzilla' ? 'Hubzilla' : this.name;
  }
}

/** Reads a body as text, failing (and dropping the connection) once it passes `max` bytes. */
async function readCapped(body: Dispatcher.ResponseData['body'], max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > max) {
      body.destroy();
      throw new UpstreamError('too large', 'UPSTREAM_ERROR', { name: '', status: null, method: '', path: '' });
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Removes any credential the caller sent from text an upstream wrote, in case it echoes one. */
function redact(text: string | null, credentials: Readonly<Record<string, string>> | undefined): string | null {
  if (text === null || !credentials) return text;
  let clean = text;
  for (const [name, value] of Object.entries(credentials)) {
    // Sudo names a user, not a secret: GitLab's "user 'x' not found" stays readable.
    if (name === 'sudo') continue;
    const secret = value.replace(/^Bearer\s+/i, '');
    if (secret.length >= 4) clean = clean.split(secret).join('[redacted]');
  }
  return clean;
}

function flattenHeaders(headers: Dispatcher.ResponseData['headers']): Record<string, string | undefined> {
  const flat: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(headers)) {
    flat[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}
