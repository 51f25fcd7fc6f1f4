/**
 * The download relay (src/upstreams/relay.ts) against scripted upstreams
 * that answer with exact bytes: framing, buffer reuse under a slow sink,
 * every failure before and after the head, abort and TLS; then the GitLab
 * download route in front of such upstreams, as its callers see failures.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { createServer as createTlsServer, type Server } from 'node:https';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { relay, RelayError, RelayPool, type RelayHead, type RelayRequest, type RelaySink } from '../../src/upstreams/relay.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

interface Scripted {
  url: URL;
  /** Each request head received, as text. */
  requests: string[];
  /** Connections accepted so far. */
  connections(): number;
  /** Resolves when the n-th connection (from 1) has closed. */
  closed(n: number): Promise<void>;
  close(): Promise<void>;
}

const servers: Scripted[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A TCP server that hands the socket to `answer` with each request head it reads (`n`: the request's number on its connection, from 1). */
async function scripted(answer: (socket: net.Socket, request: string, n: number) => void): Promise<Scripted> {
  const requests: string[] = [];
  const closes: Promise<void>[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    // Not events.once: a reset (the relay hanging up on unread bytes) is a close here, not a failure.
    closes.push(new Promise<void>((resolve) => socket.once('close', () => resolve())));
    socket.on('error', () => {});
    let text = '';
    let n = 0;
    socket.on('data', (data: Buffer) => {
      text += data.toString('latin1');
      for (let end = text.indexOf('\r\n\r\n'); end !== -1; end = text.indexOf('\r\n\r\n')) {
        const request = text.slice(0, end + 4);
        text = text.slice(end + 4);
        requests.push(request);
        answer(socket, request, ++n);
      }
    });
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  const scriptedServer: Scripted = {
    url: new URL(`http://127.0.0.1:${port}`),
    requests,
    connections: () => closes.length,
    async closed(n) {
      while (closes.length < n) await new Promise((r) => setTimeout(r, 5));
      await closes[n - 1];
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
  servers.push(scriptedServer);
  return scriptedServer;
}

/** The address of a server that has just closed: connecting to it is refused. */
async function refusedUrl(): Promise<URL> {
  const gone = await scripted(() => {});
  servers.splice(servers.indexOf(gone), 1);
  await gone.close();
  return gone.url;
}

/** A sink that takes `delayMs` to send each chunk on and reads the chunk only then, as a socket would. */
function slowSink(delayMs = 1): RelaySink & { body(): Buffer; writes: number } {
  const parts: Buffer[] = [];
  return {
    writes: 0,
    write(chunk, done) {
      this.writes++;
      setTimeout(() => {
        parts.push(Buffer.from(chunk));
        done();
      }, delayMs);
      return false;
    },
    body: () => Buffer.concat(parts),
  };
}

/** Relays `path` from `server` into `sink`; resolves with the head, or the RelayError. */
async function run(
  server: Scripted | URL,
  sink: RelaySink | null,
  options: Partial<RelayRequest> = {},
  pool?: RelayPool,
): Promise<{ head: RelayHead | null; error: RelayError | null }> {
  let head: RelayHead | null = null;
  try {
    await relay(
      {
        url: new URL('/api/v4/projects/a%2Fb/jobs/1/artifacts?job=build', server instanceof URL ? server : server.url),
        headers: { 'private-token': 'secret-token' },
        connectTimeoutMs: 2_000,
        headersTimeoutMs: 2_000,
        bodyTimeoutMs: 2_000,
        onHead(received) {
          head = received;
          return sink;
        },
        ...options,
      },
      pool,
    );
    return { head, error: null };
  } catch (error) {
    if (!(error instanceof RelayError)) throw error;
    return { head, error };
  }
}

/** A chunked encoding of `body` in chunks of pseudo-random sizes up to `max`. */
function chunked(body: Buffer, max: number): Buffer {
  const parts: Buffer[] = [];
  let seed = 7;
  for (let i = 0; i < body.length; ) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const size = Math.min(1 + (seed % max), body.length - i);
    parts.push(Buffer.from(`${size.toString(16)}\r\n`), body.subarray(i, i + size), Buffer.from('\r\n'));
    i += size;
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

/** Writes `bytes` one at a time, 1 ms apart, so every boundary falls between two reads. */
async function trickle(socket: net.Socket, bytes: Buffer): Promise<void> {
  for (const byte of bytes) {
    if (socket.destroyed) return;
    socket.write(Buffer.from([byte]));
    await new Promise((r) => setTimeout(r, 1));
  }
}

describe('relay: bodies', () => {
  it('sends one GET with the host and the headers, and relays a Content-Length body byte for byte into a slow sink', async () => {
    const body = randomBytes(3 * 1024 * 1024 + 17);
    const server = await scripted((socket) =>
      socket.end(
        Buffer.concat([
          Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: application/zip\r\nContent-Length: ${body.length}\r\nX-Seen: a\r\nx-seen: b\r\n\r\n`),
          body,
        ]),
      ),
    );
    const sink = slowSink();
    const { head, error } = await run(server, sink);
    expect(error).toBeNull();
    expect(head).toEqual({ status: 200, headers: { 'content-type': 'application/zip', 'content-length': String(body.length), 'x-seen': 'a, b' } });
    expect(sink.body().equals(body)).toBe(true);
    const [request] = server.requests;
    expect(request?.split('\r\n')).toEqual([
      'GET /api/v4/projects/a%2Fb/jobs/1/artifacts?job=build HTTP/1.1',
      `host: ${server.url.host}`,
      'private-token: secret-token',
      '',
      '',
    ]);
    // Written whole (the 3 MiB in a few writes), not byte by byte.
    expect(sink.writes).toBeLessThan(200);
  });

  it('decodes a chunked body whose every byte comes in its own read, with extensions and trailers', async () => {
    const server = await scripted((socket) => {
      const response = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nX-Checksum: 1\r\n\r\n';
      void trickle(socket, Buffer.from(response));
    });
    const sink = slowSink();
    const { head, error } = await run(server, sink);
    expect(error).toBeNull();
    expect(head?.headers['content-length']).toBeUndefined();
    expect(sink.body().toString()).toBe('hello world');
  });

  it('refuses a response framed both by Transfer-Encoding and Content-Length, as llhttp does', async () => {
    const server = await scripted((socket) =>
      socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 999\r\n\r\n5\r\nhello\r\n0\r\n\r\n'),
    );
    const { head, error } = await run(server, slowSink());
    expect(head).toBeNull();
    expect(error?.message).toMatch(/both Transfer-Encoding and Content-Length/);
  });

  it('relays a large chunked body through a slow sink unchanged', async () => {
    const body = randomBytes(2 * 1024 * 1024);
    const server = await scripted((socket) =>
      socket.write(Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'), chunked(body, 70_000)])),
    );
    const sink = slowSink();
    expect((await run(server, sink)).error).toBeNull();
    expect(sink.body().equals(body)).toBe(true);
  });

  it('reads a body without length or encoding until the upstream closes', async () => {
    const body = randomBytes(600_000);
    const server = await scripted((socket) => socket.end(Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\n\r\n'), body])));
    const sink = slowSink();
    expect((await run(server, sink)).error).toBeNull();
    expect(sink.body().equals(body)).toBe(true);
  });

  it('keeps a whole body when the upstream resets the connection after its last byte, while the sink still sends it', async () => {
    // Small enough to come in one read with the head: the body is whole when the sink is first called.
    const body = randomBytes(10_000);
    const slow = slowSink(150);
    let reached = () => {};
    const read = new Promise<void>((resolve) => (reached = resolve));
    const sink: RelaySink = {
      write: (chunk, done) => {
        reached();
        return slow.write(chunk, done);
      },
    };
    const server = await scripted((socket) => {
      socket.write(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`), body]));
      void read.then(() => socket.resetAndDestroy());
    });
    expect((await run(server, sink)).error).toBeNull();
    expect(slow.body().equals(body)).toBe(true);
  });

  it('skips interim responses and reports the final head', async () => {
    const server = await scripted((socket) =>
      socket.end(
        'HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 27\r\n\r\n{"message":"404 Not found"}',
      ),
    );
    const sink = slowSink();
    const { head, error } = await run(server, sink);
    expect(error).toBeNull();
    expect(head?.status).toBe(404);
    expect(head?.headers.link).toBeUndefined();
    expect(sink.body().toString()).toBe('{"message":"404 Not found"}');
  });

  it('ends at once on a 204, and when onHead wants no body (HEAD) closes the connection without reading it', async () => {
    const empty = await scripted((socket) => socket.write('HTTP/1.1 204 No Content\r\n\r\n'));
    const sink = slowSink();
    expect(await run(empty, sink)).toMatchObject({ head: { status: 204 }, error: null });
    expect(sink.writes).toBe(0);

    const big = await scripted((socket) => socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n${'x'.repeat(1000)}`));
    expect(await run(big, null)).toMatchObject({ head: { status: 200 }, error: null });
    await big.closed(1);
  });
});

describe('relay: failures', () => {
  const expectFailure = (result: { error: RelayError | null }, code: string, afterHead: boolean) => {
    expect(result.error).toBeInstanceOf(RelayError);
    expect({ code: result.error?.code, afterHead: result.error?.afterHead }).toEqual({ code, afterHead });
  };

  it('before the head: refused, closed, not HTTP, an oversized head, a head too slow, a header that would split the request', async () => {
    expectFailure(await run(await refusedUrl(), slowSink()), 'UPSTREAM_UNAVAILABLE', false);

    expectFailure(await run(await scripted((socket) => socket.end()), slowSink()), 'UPSTREAM_UNAVAILABLE', false);
    expectFailure(await run(await scripted((socket) => socket.end('SSH-2.0-OpenSSH\r\n\r\n')), slowSink()), 'UPSTREAM_ERROR', false);
    expectFailure(await run(await scripted((socket) => socket.end('HTTP/1.1 200 OK\r\n folded: value\r\n\r\n')), slowSink()), 'UPSTREAM_ERROR', false);
    expectFailure(await run(await scripted((socket) => socket.write(`HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(70_000)}`)), slowSink()), 'UPSTREAM_ERROR', false);
    expectFailure(
      await run(await scripted((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello')), slowSink()),
      'UPSTREAM_ERROR',
      false,
    );

    const silent = await scripted(() => {});
    const started = Date.now();
    expectFailure(await run(silent, slowSink(), { headersTimeoutMs: 150 }), 'UPSTREAM_TIMEOUT', false);
    expect(Date.now() - started).toBeLessThan(1_500);
    await silent.closed(1);

    const never = await scripted(() => {});
    expectFailure(await run(never, slowSink(), { headers: { 'private-token': 'a\r\nsudo: root' } }), 'UPSTREAM_ERROR', false);
    expect(never.requests).toEqual([]);
  });

  it('after the head: a body shorter than its length, a chunked body cut off, a bad chunk size, a stalled body', async () => {
    const short = slowSink();
    expectFailure(await run(await scripted((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello')), short), 'UPSTREAM_ERROR', true);
    expect(short.writes).toBe(1);
    expectFailure(
      await run(await scripted((socket) => socket.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n')), slowSink()),
      'UPSTREAM_ERROR',
      true,
    );
    expectFailure(
      await run(await scripted((socket) => socket.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n')), slowSink()),
      'UPSTREAM_ERROR',
      true,
    );
    expectFailure(
      await run(await scripted((socket) => socket.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXY0\r\n\r\n')), slowSink()),
      'UPSTREAM_ERROR',
      true,
    );
    const stalled = await scripted((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello'));
    expectFailure(await run(stalled, slowSink(), { bodyTimeoutMs: 150 }), 'UPSTREAM_TIMEOUT', true);
    await stalled.closed(1);
  });

  it('waits on a sink slower than the body timeout without timing out', async () => {
    const body = randomBytes(1024 * 1024);
    const server = await scripted((socket) => socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`), body])));
    const sink = slowSink(300);
    expect((await run(server, sink, { bodyTimeoutMs: 100 })).error).toBeNull();
    expect(sink.body().equals(body)).toBe(true);
  });

  it('stops and closes the upstream connection when the caller aborts mid-body', async () => {
    const server = await scripted((socket) => socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n${'x'.repeat(100_000)}`));
    const abort = new AbortController();
    const sink: RelaySink = {
      write: (_chunk, done) => {
        abort.abort();
        setImmediate(done);
        return true;
      },
    };
    const result = await run(server, sink, { signal: abort.signal });
    expect(result.error?.afterHead).toBe(true);
    await server.closed(1);
  });
});

describe('relay: kept-alive connections', () => {
  const answer = (body: string, headers = '') => `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n${headers}\r\n${body}`;

  it('sends the next download on the same connection once the last one was read whole', async () => {
    const server = await scripted((socket, _request, n) => socket.write(answer(`body ${n}`)));
    const pool = new RelayPool(4);
    try {
      for (const expected of ['body 1', 'body 2', 'body 3']) {
        const sink = slowSink();
        expect((await run(server, sink, {}, pool)).error).toBeNull();
        expect(sink.body().toString()).toBe(expected);
      }
      expect(server.connections()).toBe(1);
      expect(server.requests).toHaveLength(3);
    } finally {
      pool.close();
    }
  });

  it('resends on a new connection when the upstream drops the idle one as the request goes out', async () => {
    // The race every keep-alive client meets: the upstream's idle timeout ends the connection just as it is used again.
    const server = await scripted((socket, _request, n) => (n === 1 ? socket.write(answer('first')) : socket.end()));
    const pool = new RelayPool(4);
    try {
      expect((await run(server, slowSink(), {}, pool)).error).toBeNull();
      const sink = slowSink();
      expect((await run(server, sink, {}, pool)).error).toBeNull();
      expect(sink.body().toString()).toBe('first');
      expect(server.connections()).toBe(2);
      expect(server.requests).toHaveLength(3);
    } finally {
      pool.close();
    }
  });

  it('opens a new connection after Connection: close, a Keep-Alive of one second, a HEAD, or bytes past the body', async () => {
    for (const [headers, trailing, sink] of [
      ['Connection: close\r\n', '', slowSink()],
      ['Keep-Alive: timeout=1\r\n', '', slowSink()],
      ['', '', null],
      ['', 'HTTP/1.1 200 OK\r\n', slowSink()],
    ] as const) {
      const server = await scripted((socket) => socket.write(answer('hello', headers) + trailing));
      const pool = new RelayPool(4);
      try {
        expect((await run(server, sink, {}, pool)).error).toBeNull();
        await server.closed(1);
        expect((await run(server, slowSink(), {}, pool)).error).toBeNull();
        expect(server.connections()).toBe(2);
      } finally {
        pool.close();
      }
    }
  });

  it('closes an idle connection that the upstream writes to unasked', async () => {
    const server = await scripted((socket) => {
      socket.write(answer('hello'));
      setTimeout(() => socket.write('HTTP/1.1 200 OK\r\n\r\n'), 20);
    });
    const pool = new RelayPool(4);
    try {
      expect((await run(server, slowSink(), {}, pool)).error).toBeNull();
      await server.closed(1);
      expect(pool.take()).toBeUndefined();
    } finally {
      pool.close();
    }
  });
});

describe('relay: TLS', () => {
  const dir = new URL('../fixtures/tls/', import.meta.url);
  /** An https server with the fixture's self-signed certificate for 127.0.0.1 and localhost. */
  async function tlsServer(handler: RequestListener): Promise<{ server: Server; port: number }> {
    const server = createTlsServer({ key: readFileSync(new URL('localhost.key', dir)), cert: readFileSync(new URL('localhost.crt', dir)) }, handler);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { server, port: (server.address() as net.AddressInfo).port };
  }

  it('relays over https with buffers never reused before the sink is done with them', async () => {
    const body = randomBytes(4 * 1024 * 1024);
    let host = '';
    const { server, port } = await tlsServer((req, res) => {
      host = req.headers.host ?? '';
      res.writeHead(200, { 'content-length': body.length, 'content-type': 'application/zip' });
      res.end(body);
    });
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', fileURLToPath(new URL('relay-client.ts', dir)), `https://127.0.0.1:${port}/file`],
        {
          env: { ...process.env, NODE_EXTRA_CA_CERTS: fileURLToPath(new URL('localhost.crt', dir)) },
        },
      );
      const result = JSON.parse(stdout) as { head: RelayHead; bytes: number; sha256: string };
      expect(result.head.status).toBe(200);
      expect(result.bytes).toBe(body.length);
      expect(result.sha256).toBe(createHash('sha256').update(body).digest('hex'));
      expect(host).toBe(`127.0.0.1:${port}`);
    } finally {
      server.close();
    }
  }, 30_000);

  it('refuses a certificate the process does not trust', async () => {
    const { server, port } = await tlsServer((_req, res) => res.end('no'));
    try {
      const { error } = await run(new URL(`https://127.0.0.1:${port}`), slowSink());
      expect(error?.code).toBe('UPSTREAM_UNAVAILABLE');
    } finally {
      server.close();
    }
  });
});

describe('GitLab download route over failing upstreams', () => {
  const apps: TestApp[] = [];
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
  });
  const route = '/downloads/gitlab/projects/1/jobs/1007/artifacts';
  const appFor = async (gitlabUrl: URL, env: Record<string, string> = {}) => {
    const app = await createTestApp({ gitlabUrl, env });
    apps.push(app);
    return (path = route, method = 'GET') => fetch(new URL(path, app.url), { method, headers: { 'private-token': 'demo-token' } });
  };

  it('answers 502 when GitLab cannot be reached and 504 when its head is late, as JSON errors', async () => {
    const down = await (await appFor(await refusedUrl()))();
    expect(down.status).toBe(502);
    expect(await down.json()).toEqual({
      errors: [
        { message: 'GitLab could not be reached (connection refused): check GITLAB_URL, or retry later.', extensions: { code: 'UPSTREAM_UNAVAILABLE' } },
      ],
    });

    const slow = await appFor((await scripted(() => {})).url, { UPSTREAM_TIMEOUT_MS: '300' });
    const late = await slow();
    expect(late.status).toBe(504);
    expect(await late.json()).toEqual({ errors: [{ message: 'GitLab did not answer in time.', extensions: { code: 'UPSTREAM_TIMEOUT' } }] });

    const garbled = await (await appFor((await scripted((socket) => socket.end('HTTP/2 200\r\n\r\n'))).url))();
    expect(garbled.status).toBe(502);
    expect(((await garbled.json()) as { errors: { extensions: { code: string } }[] }).errors[0]?.extensions.code).toBe('UPSTREAM_ERROR');
  });

  it("cuts the caller's response short when GitLab breaks off mid-body, so the caller cannot take it for whole", async () => {
    const cut = await scripted((socket) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/zip\r\nContent-Length: 1000000\r\n\r\n${'x'.repeat(300_000)}`);
      setTimeout(() => socket.destroy(), 50);
    });
    const response = await (await appFor(cut.url))();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe('1000000');
    await expect(response.arrayBuffer()).rejects.toThrow();
  });

  it("counts GitLab's 503s against the breaker, which then refuses downloads without calling it", async () => {
    const secret = 'glpat-SENTINELdownload5xx0000';
    const server = await scripted((socket) =>
      socket.write(`HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: ${12 + secret.length}\r\n\r\nbusy, token ${secret}`),
    );
    const get = await appFor(server.url, { BREAKER_THRESHOLD: '2' });
    for (let i = 0; i < 2; i++) {
      // The status passes on; GitLab's body does not: the gateway answers with its own.
      const busy = await get();
      expect(busy.status).toBe(503);
      expect(await busy.json()).toEqual({ errors: [{ message: 'GitLab answered 503.', extensions: { code: 'UPSTREAM_ERROR' } }] });
    }
    const refused = await get();
    expect(refused.status).toBe(502);
    const body = (await refused.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors[0]?.extensions.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(body.errors[0]?.message).toMatch(/calls are paused/);
    expect(server.requests).toHaveLength(2);
  });

  it("passes GitLab's redirect to object storage on to the caller, without following it", async () => {
    const signed = 'https://objects.example.invalid/artifacts/1007.zip?X-Amz-Signature=abc';
    const server = await scripted((socket) => socket.end(`HTTP/1.1 302 Found\r\nLocation: ${signed}\r\nContent-Length: 0\r\n\r\n`));
    const app = await createTestApp({ gitlabUrl: server.url });
    apps.push(app);
    const response = await fetch(new URL(route, app.url), { headers: { 'private-token': 'demo-token' }, redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(signed);
    expect(server.requests).toHaveLength(1);
  });

  it('relays a chunked answer with its type and without a length, and a HEAD without a body', async () => {
    const server = await scripted((socket, request) => {
      if (request.startsWith('GET '))
        socket.end(
          `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nX-Private: no\r\n\r\n${chunked(Buffer.from('a'.repeat(5000)), 300).toString('latin1')}`,
        );
    });
    const get = await appFor(server.url);
    const response = await get('/downloads/gitlab/projects/1/jobs/5/trace');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain');
    expect(response.headers.get('x-private')).toBeNull();
    expect(await response.text()).toBe('a'.repeat(5000));
    expect(server.requests[0]?.split('\r\n')[0]).toBe('GET /api/v4/projects/1/jobs/5/trace HTTP/1.1');

    const head = await get('/downloads/gitlab/projects/1/jobs/5/trace', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/plain');
    expect(await head.text()).toBe('');
  });
});
