/**
 * One HTTP/1.1 GET whose body is relayed into a sink through reused read
 * buffers: the download routes' path for artifacts and snapshots of any
 * size. undici reads every chunk into a fresh 64 KiB buffer, and on a 1 GiB
 * body the page faults of those buffers cost more CPU than the bytes
 * themselves; here the socket reads into buffers of up to 1 MiB that are
 * used again (`onread`): one fills while the sink sends the last one on, and
 * reading pauses while two wait on the sink. (Over TLS, Node hands over
 * decrypted 16 KiB records and may go on for a few after a pause: each
 * gets a free buffer of that size, never one still being written.)
 * Connections are kept alive between downloads (RelayPool), so a small one,
 * a job log polled every few seconds, costs no new handshake.
 */
import net from 'node:net';
import tls from 'node:tls';

/** Error codes a relay fails with (the transport subset of errors.ts's set). */
export type RelayFailure = 'UPSTREAM_TIMEOUT' | 'UPSTREAM_UNAVAILABLE' | 'UPSTREAM_ERROR';

export class RelayError extends Error {
  constructor(
    message: string,
    readonly code: RelayFailure,
    /** True once the head reached `onHead`: the sink then holds part of a body. */
    readonly afterHead: boolean,
    /** A kept-alive connection that failed before any byte of its answer: the upstream had closed it while idle. */
    readonly stale = false,
    /** The socket's error, when one ended the call: its code says why (refused, DNS, TLS). */
    cause?: Error,
  ) {
    super(message, { cause });
    this.name = 'RelayError';
  }
}

/** The upstream's final status and headers (names lower-cased, repeats joined with ", "). */
export interface RelayHead {
  status: number;
  headers: Readonly<Record<string, string | undefined>>;
}

/** Where a body goes: a writable whose callback says a chunk has left, such as a ServerResponse. */
export interface RelaySink {
  write(chunk: Uint8Array, callback: (error?: Error | null) => void): boolean;
}

export interface RelayRequest {
  /** Origin, path and query of the GET. */
  url: URL;
  headers: Readonly<Record<string, string>>;
  connectTimeoutMs: number;
  /** From the start of the call to the end of the head. */
  headersTimeoutMs: number;
  /** Longest wait for the next bytes while the sink is ready for them. */
  bodyTimeoutMs: number;
  signal?: AbortSignal;
  /** Sees the head once; returns where the body goes, or null to drop it (a HEAD request). */
  onHead(head: RelayHead): RelaySink | null;
}

/**
 * Read buffer sizes: a connection starts at 64 KiB and doubles while reads
 * fill its buffers, up to 1 MiB, where a 1 GiB body costs a fifth less CPU
 * than at 256 KiB (fewer system calls); small answers stay small.
 */
const FIRST_READ_BYTES = 64 * 1024;
const READ_BYTES = 1024 * 1024;
/** Read buffers that may wait on the sink before reading pauses: one being sent while the next fills. */
const BUFFERS_IN_FLIGHT = 2;
/** Node decrypts TLS in records of at most 16 KiB and hands each over on its own. */
const TLS_READ_BYTES = 16 * 1024;
/** Node's and undici's limit for a response head (http.maxHeaderSize): what llhttp accepts, and no more. */
const MAX_HEAD_BYTES = 16 * 1024;
/** Longest chunk-size or trailer line, and all trailers together. */
const MAX_LINE_BYTES = 8 * 1024;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A trailer field: a token, a colon, and a value without control bytes (HTAB aside). */
const TRAILER = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+:[^\u0000-\u0008\u000a-\u001f\u007f]*$/;

/** How long an idle connection is kept, unless the upstream's Keep-Alive header says less. */
const IDLE_MS = 4_000;

/** Idle kept-alive connections to one upstream, the newest taken first. */
export class RelayPool {
  private readonly idle: Connection[] = [];

  constructor(private readonly max: number) {}

  /** An idle connection, or undefined when none is left. */
  take(): Connection | undefined {
    for (let connection = this.idle.pop(); connection; connection = this.idle.pop()) {
      if (connection.wake()) return connection;
    }
    return undefined;
  }

  /** Keeps a connection whose answer has been read whole, for `idleMs` at most. */
  put(connection: Connection, idleMs: number): void {
    if (this.idle.length >= this.max || idleMs <= 0) return connection.close();
    this.idle.push(connection);
    connection.sleep(idleMs, () => {
      const at = this.idle.indexOf(connection);
      if (at !== -1) this.idle.splice(at, 1);
    });
  }

  /** Closes every idle connection. */
  close(): void {
    for (const connection of this.idle.splice(0)) connection.close();
  }
}

/**
 * Relays one GET, on an idle connection of `pool` when there is one (and on
 * a new one if the upstream had closed that one meanwhile); resolves once
 * the whole body has been handed to the sink and sent on.
 */
export async function relay(request: RelayRequest, pool?: RelayPool): Promise<void> {
  const idle = pool?.take();
  if (idle) {
    try {
      return await exchange(request, idle, pool);
    } catch (error) {
      if (!(error instanceof RelayError && error.stale)) throw error;
    }
  }
  return exchange(request, new Connection(request.url), pool);
}

function exchange(request: RelayRequest, connection: Connection, pool: RelayPool | undefined): Promise<void> {
  return new Promise((resolve, reject) => new Exchange(request, connection, pool, resolve, reject).start());
}

/**
 * One upstream connection: its socket, the read buffers it fills, and the
 * exchange its bytes go to now (none while it waits in the pool, when any
 * byte or end closes it).
 */
export class Connection {
  readonly socket: net.Socket;
  exchange: Exchange | null = null;
  /** Has answered before: a failure before the next answer's first byte means the upstream let it go. */
  used = false;
  connected = false;
  /** Read buffers no write holds, and the writes still holding each of the others. */
  private readonly free: Buffer[] = [];
  private readonly busy = new Map<Buffer, number>();
  private idleTimer: NodeJS.Timeout | null = null;
  private onIdleClose: (() => void) | null = null;
  /** Size of the buffers handed out now, between the first and the largest. */
  private bytes: number;
  private readonly firstBytes: number;
  private readonly maxBytes: number;

  constructor(url: URL) {
    const secure = url.protocol === 'https:';
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = Number(url.port) || (secure ? 443 : 80);
    this.firstBytes = secure ? TLS_READ_BYTES : FIRST_READ_BYTES;
    this.maxBytes = secure ? TLS_READ_BYTES : READ_BYTES;
    this.bytes = this.firstBytes;
    const onread: net.OnReadOpts = { buffer: this.nextBuffer, callback: (n, buffer) => this.onRead(n, buffer as Buffer) };
    // Node takes `onread` in tls.connect too (since 15.1); its types have not caught up.
    const secureOptions: tls.ConnectionOptions & { onread: net.OnReadOpts } = {
      host,
      port,
      servername: net.isIP(host) ? undefined : host,
      ALPNProtocols: ['http/1.1'],
      onread,
    };
    this.socket = secure ? tls.connect(secureOptions) : net.connect({ host, port, onread });
    this.socket.once(secure ? 'secureConnect' : 'connect', () => {
      this.connected = true;
      this.exchange?.onConnect();
    });
    this.socket.on('error', (error) => this.exchange?.onSocketEnd(error.message, error));
    this.socket.on('timeout', () => this.exchange?.onStall());
    this.socket.on('end', () => (this.exchange ? this.exchange.onSocketEnd(null) : this.socket.destroy()));
    this.socket.on('close', () => {
      this.exchange?.onSocketEnd('the connection closed');
      this.onIdleClose?.();
    });
  }

  /** Buffers held by writes not yet done. */
  get waiting(): number {
    return this.busy.size;
  }

  hold(buffer: Buffer): void {
    this.busy.set(buffer, (this.busy.get(buffer) ?? 0) + 1);
  }

  release(buffer: Buffer): void {
    const holders = (this.busy.get(buffer) ?? 1) - 1;
    if (holders > 0) this.busy.set(buffer, holders);
    else if (this.busy.delete(buffer)) this.free.push(buffer);
  }

  /** Into the pool: reading, so that the upstream closing it is seen, holding no large buffer, and not keeping the process up. */
  sleep(idleMs: number, onGone: () => void): void {
    this.exchange = null;
    this.free.length = 0;
    this.bytes = this.firstBytes;
    this.used = true;
    this.onIdleClose = onGone;
    this.socket.setTimeout(0);
    this.socket.resume();
    this.socket.unref();
    this.idleTimer = setTimeout(() => this.close(), idleMs);
    this.idleTimer.unref();
  }

  /** Out of the pool; false if it closed meanwhile. */
  wake(): boolean {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    this.onIdleClose = null;
    if (this.socket.destroyed || !this.socket.readable || !this.socket.writable) return false;
    this.socket.ref();
    return true;
  }

  close(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.exchange = null;
    this.socket.destroy();
  }

  /** Node asks for the buffer of the next read after each one: a free one of the size in force, never one a write still holds. */
  private readonly nextBuffer = (): Buffer => {
    for (let buffer = this.free.pop(); buffer; buffer = this.free.pop()) if (buffer.length >= this.bytes) return buffer;
    return Buffer.allocUnsafe(this.bytes);
  };

  /** `onread`'s callback: false pauses the socket until the sink has sent these bytes on. */
  private onRead(bytes: number, buffer: Buffer): boolean {
    if (bytes === buffer.length && this.bytes < this.maxBytes) this.bytes *= 2;
    const exchange = this.exchange;
    // Bytes on an idle connection were never asked for: it cannot be trusted with a request.
    if (!exchange) {
      this.socket.destroy();
      return false;
    }
    const more = exchange.onRead(buffer.subarray(0, bytes), buffer);
    if (!this.busy.has(buffer)) this.free.push(buffer);
    return more;
  }
}

type Framing =
  | { kind: 'length'; left: number }
  | { kind: 'close' }
  | { kind: 'chunked'; state: 'size' | 'data' | 'crlf' | 'trailer'; left: number; line: string; trailerBytes: number };

/** One request and its answer on a connection. */
class Exchange {
  /** Head bytes read so far (copied out of the read buffer), until the blank line. */
  private head: Buffer | null = Buffer.alloc(0);
  private http10 = false;
  private framing: Framing | null = null;
  private sink: RelaySink | null = null;
  /** Sink writes not yet called back. */
  private pending = 0;
  private complete = false;
  private settled = false;
  /** Set when the head reached onHead: a failure after it leaves a partial body with the sink. */
  private headed = false;
  /** Some byte of the answer has come: a failure now says nothing of an idle connection gone stale. */
  private answered = false;
  /** Bytes after the end of the body, or a close-delimited body: the connection cannot take another request. */
  private spent = false;
  private keepAliveMs = IDLE_MS;
  private paused = false;
  /** Inside onRead: the end of the body waits for it, to see whether bytes came after. */
  private reading = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private connectTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly request: RelayRequest,
    private readonly connection: Connection,
    private readonly pool: RelayPool | undefined,
    private readonly resolve: () => void,
    private readonly reject: (error: RelayError) => void,
  ) {}

  start(): void {
    const { url, headers, signal } = this.request;
    let text = `GET ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
    for (const [name, value] of Object.entries(headers)) {
      // The credentials were checked where they came in; this keeps a stray line break from ever splitting the request.
      if (!TOKEN.test(name) || /[\0\r\n]/.test(value)) return this.fail('UPSTREAM_ERROR', `the header ${name} cannot be sent`);
      text += `${name}: ${value}\r\n`;
    }
    text += '\r\n';
    if (signal?.aborted) return this.fail('UPSTREAM_UNAVAILABLE', 'the call was aborted');
    signal?.addEventListener('abort', this.onAbort, { once: true });
    this.connection.exchange = this;
    if (!this.connection.connected) this.connectTimer = this.timer(this.request.connectTimeoutMs, 'UPSTREAM_TIMEOUT', 'the connection was not made in time');
    this.timer(this.request.headersTimeoutMs, 'UPSTREAM_TIMEOUT', 'the response head did not come in time');
    this.connection.socket.write(text);
  }

  onConnect(): void {
    if (this.connectTimer) clearTimeout(this.connectTimer);
  }

  /** An error, an end or a close of the socket (`message` null for a clean end). */
  onSocketEnd(message: string | null, error?: Error): void {
    if (this.settled) return;
    // A close-delimited body ends here; its last writes may still be on their way.
    if (message === null && this.framing?.kind === 'close' && !this.complete) return this.end();
    // A reset after the last byte of the body takes nothing from the caller.
    if (this.complete) return;
    const stale = this.connection.used && !this.answered;
    if (this.headed) this.fail('UPSTREAM_ERROR', message ?? 'the body was cut short');
    else this.fail('UPSTREAM_UNAVAILABLE', message ?? 'the connection closed before a response', stale, error);
  }

  onStall(): void {
    this.fail('UPSTREAM_TIMEOUT', 'the body stalled');
  }

  private timer(ms: number, code: RelayFailure, message: string): NodeJS.Timeout {
    const timer = setTimeout(() => this.fail(code, message), ms);
    this.timers.push(timer);
    return timer;
  }

  private readonly onAbort = (): void => this.fail('UPSTREAM_UNAVAILABLE', 'the call was aborted');

  /** Bytes read into `buffer`; false pauses the socket until the sink has sent them on. */
  onRead(data: Buffer, buffer: Buffer): boolean {
    if (this.settled) return false;
    this.answered = true;
    this.reading = true;
    let body: Buffer | null = data;
    if (this.head !== null) body = this.readHead(data);
    if (body !== null && body.length > 0 && !this.settled) {
      if (this.complete) this.spent = true;
      else this.readBody(body, buffer);
    }
    this.reading = false;
    if (this.complete && this.pending === 0) this.finish();
    if (this.settled || this.connection.waiting < BUFFERS_IN_FLIGHT) return true;
    // No stall timeout while the caller is the slow side.
    this.paused = true;
    this.connection.socket.setTimeout(0);
    return false;
  }

  /** Collects head bytes; once the head is whole, passes it on and returns the body bytes after it (a copy). */
  private readHead(data: Buffer): Buffer | null {
    let head = Buffer.concat([this.head ?? Buffer.alloc(0), data]);
    for (;;) {
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) {
        if (head.length > MAX_HEAD_BYTES) this.fail('UPSTREAM_ERROR', 'the response head is too large');
        this.head = head;
        return null;
      }
      const parsed = this.parseHead(head.toString('latin1', 0, end));
      if (!parsed) return null;
      head = head.subarray(end + 4);
      // An interim response (103 Early Hints, a stray 100) comes before the real one.
      if (parsed.status >= 100 && parsed.status < 200) continue;
      this.head = null;
      this.begin(parsed);
      // Copied out of the read buffer: it may be written while that buffer takes the next read.
      return head;
    }
  }

  private parseHead(text: string): RelayHead | null {
    const lines = text.split('\r\n');
    const status = /^HTTP\/1\.([01]) ([1-5]\d\d)(?: .*)?$/.exec(lines[0] ?? '');
    if (!status || status[2] === '101') {
      this.fail('UPSTREAM_ERROR', 'the response is not HTTP/1.1');
      return null;
    }
    this.http10 = status[1] === '0';
    const headers: Record<string, string | undefined> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).toLowerCase();
      // A folded line or a name with spaces is how smuggling starts: refused, as undici does.
      if (colon <= 0 || !TOKEN.test(name)) {
        this.fail('UPSTREAM_ERROR', 'the response head is malformed');
        return null;
      }
      const value = line.slice(colon + 1).trim();
      // A bare LF, a NUL or another control byte in a value (HTAB aside) is refused, as llhttp refuses it:
      // two parsers that split such a head differently are how responses get smuggled.
      if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value)) {
        this.fail('UPSTREAM_ERROR', 'the response head is malformed');
        return null;
      }
      const seen = headers[name];
      headers[name] = seen === undefined ? value : `${seen}, ${value}`;
    }
    return { status: Number(status[2]), headers };
  }

  /** Decides how the body ends (RFC 9112, 6.3) and asks for the sink. */
  private begin(head: RelayHead): void {
    const headers = { ...head.headers };
    const encoding = headers['transfer-encoding'];
    const length = headers['content-length'];
    if (head.status === 204 || head.status === 304) {
      this.framing = { kind: 'length', left: 0 };
    } else if (encoding !== undefined && length !== undefined) {
      // Both: RFC 9112 6.3 lets a recipient read Transfer-Encoding, but a gateway that did would pass on a
      // response another parser frames differently. Refused, as llhttp refuses it.
      return this.fail('UPSTREAM_ERROR', 'the response has both Transfer-Encoding and Content-Length');
    } else if (encoding !== undefined) {
      this.framing = /(?:^|,)\s*chunked\s*$/i.test(encoding) ? { kind: 'chunked', state: 'size', left: 0, line: '', trailerBytes: 0 } : { kind: 'close' };
    } else if (length !== undefined) {
      const values = new Set(length.split(',').map((v) => v.trim()));
      const [value] = values;
      if (values.size !== 1 || value === undefined || !/^\d{1,15}$/.test(value)) return this.fail('UPSTREAM_ERROR', 'the Content-Length is not valid');
      headers['content-length'] = value;
      this.framing = { kind: 'length', left: Number(value) };
    } else {
      this.framing = { kind: 'close' };
    }
    // Kept alive unless the upstream says otherwise (RFC 9112, 9.3), for as long as its Keep-Alive allows, less a second for the way.
    if (this.framing.kind === 'close' || this.http10 || /(?:^|,)\s*close\s*(?:,|$)/i.test(headers.connection ?? '')) this.spent = true;
    const timeout = /(?:^|,)\s*timeout=(\d+)/i.exec(headers['keep-alive'] ?? '');
    if (timeout) this.keepAliveMs = Math.min(IDLE_MS, Number(timeout[1]) * 1000 - 1000);
    for (const timer of this.timers.splice(0)) clearTimeout(timer);
    this.headed = true;
    let sink: RelaySink | null;
    try {
      sink = this.request.onHead({ status: head.status, headers });
    } catch (error) {
      return this.fail('UPSTREAM_ERROR', error instanceof Error ? error.message : 'the head was refused');
    }
    if (this.framing.kind === 'length' && this.framing.left === 0) return this.end();
    // A body nobody reads (a HEAD) stays in the connection, which then cannot be used again.
    if (sink === null) {
      this.spent = true;
      return this.end();
    }
    this.sink = sink;
    this.connection.socket.setTimeout(this.request.bodyTimeoutMs);
  }

  /** Sends on the body bytes in `data`, which lie in `owner` (a read buffer) or in a copy. */
  private readBody(data: Buffer, owner: Buffer): void {
    const framing = this.framing;
    if (!framing || this.complete) return;
    if (framing.kind === 'close') return this.send(data, owner);
    if (framing.kind === 'length') {
      const take = Math.min(framing.left, data.length);
      this.send(data.subarray(0, take), owner);
      if (data.length > take) this.spent = true;
      framing.left -= take;
      if (framing.left === 0) this.end();
      return;
    }
    let i = 0;
    while (i < data.length && !this.settled && !this.complete) {
      if (framing.state === 'data') {
        const take = Math.min(framing.left, data.length - i);
        this.send(data.subarray(i, i + take), owner);
        i += take;
        framing.left -= take;
        if (framing.left === 0) {
          framing.state = 'crlf';
          framing.line = '';
        }
        continue;
      }
      if (framing.state === 'crlf') {
        // The CRLF after a chunk's data, possibly split across two reads.
        framing.line += String.fromCharCode(data[i++] ?? 0);
        if (framing.line === '\r') continue;
        if (framing.line !== '\r\n') return this.fail('UPSTREAM_ERROR', 'a chunk does not end where its size says');
        framing.state = 'size';
        framing.line = '';
        continue;
      }
      const newline = data.indexOf(10, i);
      const stop = newline === -1 ? data.length : newline;
      framing.line += data.toString('latin1', i, stop);
      if (framing.line.length > MAX_LINE_BYTES) return this.fail('UPSTREAM_ERROR', 'a chunk line is too long');
      i = stop + 1;
      if (newline === -1) break;
      // Chunk lines end in CRLF: a bare LF is refused, as llhttp refuses it.
      if (!framing.line.endsWith('\r')) return this.fail('UPSTREAM_ERROR', 'a chunk line does not end in CRLF');
      const line = framing.line.slice(0, -1);
      framing.line = '';
      if (framing.state === 'trailer') {
        // Trailers are dropped (the caller's head has gone already), but only well-formed ones.
        framing.trailerBytes += line.length;
        if (framing.trailerBytes > MAX_LINE_BYTES) return this.fail('UPSTREAM_ERROR', 'the trailers are too large');
        if (line === '') this.end();
        else if (!TRAILER.test(line)) return this.fail('UPSTREAM_ERROR', 'a trailer is malformed');
        continue;
      }
      const size = /^([0-9a-fA-F]{1,12})[ \t]*(?:;[^\u0000-\u0008\u000a-\u001f\u007f]*)?$/.exec(line);
      if (!size) return this.fail('UPSTREAM_ERROR', 'a chunk size is not valid');
      framing.left = Number.parseInt(size[1] ?? '', 16);
      framing.state = framing.left === 0 ? 'trailer' : 'data';
    }
    if (this.complete && i < data.length) this.spent = true;
  }

  private send(chunk: Buffer, owner: Buffer): void {
    if (chunk.length === 0 || !this.sink) return;
    this.pending++;
    this.connection.hold(owner);
    this.sink.write(chunk, (error) => this.afterWrite(owner, error));
  }

  private afterWrite(owner: Buffer, error?: Error | null): void {
    this.pending--;
    this.connection.release(owner);
    if (error) return this.fail('UPSTREAM_ERROR', 'the caller stopped reading');
    if (this.settled) return;
    if (this.complete) {
      if (this.pending === 0) this.finish();
      return;
    }
    if (!this.paused || this.connection.waiting >= BUFFERS_IN_FLIGHT) return;
    this.paused = false;
    this.connection.socket.setTimeout(this.request.bodyTimeoutMs);
    this.connection.socket.resume();
  }

  /** The body is whole: done once the sink has sent the last bytes on. */
  private end(): void {
    this.complete = true;
    this.connection.socket.setTimeout(0);
    if (this.pending === 0 && !this.reading) this.finish();
  }

  private finish(): void {
    if (this.settled) return;
    this.settle();
    if (this.pool && !this.spent) this.pool.put(this.connection, this.keepAliveMs);
    else this.connection.close();
    this.resolve();
  }

  private fail(code: RelayFailure, message: string, stale = false, cause?: Error): void {
    if (this.settled) return;
    this.settle();
    this.connection.close();
    this.reject(new RelayError(message, code, this.headed, stale, cause));
  }

  private settle(): void {
    this.settled = true;
    for (const timer of this.timers.splice(0)) clearTimeout(timer);
    this.request.signal?.removeEventListener('abort', this.onAbort);
    if (this.connection.exchange === this) this.connection.exchange = null;
  }
}
