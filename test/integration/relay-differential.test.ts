/**
 * The hand-written HTTP/1.1 response reader of the download relay
 * (src/upstreams/relay.ts) against undici's (llhttp), the parser it stands
 * in for: both read the same bytes from a scripted TCP upstream, and
 *
 * - whatever llhttp refuses, the relay refuses too (it never hands a caller
 *   bytes that a standard parser would not accept as this response);
 * - where both accept, they deliver the same status and the same body.
 *
 * The cases are a list of known smuggling and framing traps (conflicting or
 * duplicate Content-Length, Transfer-Encoding with Content-Length, bad chunk
 * sizes, header injection, oversized heads, early close, trailers), then
 * seeded random mutations of valid responses, bounded in number and time.
 * Where the relay is stricter than llhttp, the case is listed in the output.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { relay, RelayError, type RelaySink } from '../../src/upstreams/relay.js';

type Verdict = { ok: true; status: number; body: string } | { ok: false };

let server: net.Server;
let origin: URL;
/** The bytes the next connection is answered with. */
let answer: Buffer = Buffer.alloc(0);

beforeAll(async () => {
  server = net.createServer((socket) => {
    socket.on('error', () => {});
    const bytes = answer;
    let seen = '';
    socket.on('data', (data: Buffer) => {
      seen += data.toString('latin1');
      if (!seen.includes('\r\n\r\n')) return;
      socket.end(bytes);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = new URL(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
});
afterAll(() => {
  server.close();
});

const digest = (body: Buffer) => createHash('sha256').update(body).digest('hex').slice(0, 16);

async function viaRelay(): Promise<Verdict> {
  const parts: Buffer[] = [];
  let status = 0;
  const sink: RelaySink = {
    write(chunk, done) {
      parts.push(Buffer.from(chunk));
      done();
      return true;
    },
  };
  try {
    await relay({
      url: new URL('/file', origin),
      headers: {},
      connectTimeoutMs: 1_000,
      headersTimeoutMs: 1_000,
      bodyTimeoutMs: 1_000,
      onHead(head) {
        status = head.status;
        return sink;
      },
    });
    return { ok: true, status, body: digest(Buffer.concat(parts)) };
  } catch (error) {
    if (error instanceof RelayError) return { ok: false };
    throw error;
  }
}

async function viaUndici(): Promise<Verdict> {
  const client = new Client(origin.origin, { headersTimeout: 1_000, bodyTimeout: 1_000, pipelining: 0 });
  try {
    const response = await client.request({ path: '/file', method: 'GET' });
    const body = Buffer.from(await response.body.arrayBuffer());
    return { ok: true, status: response.statusCode, body: digest(body) };
  } catch {
    return { ok: false };
  } finally {
    await client.destroy();
  }
}

/** Both parsers on the same bytes. */
async function compare(bytes: Buffer): Promise<{ relay: Verdict; undici: Verdict }> {
  answer = bytes;
  const relayVerdict = await viaRelay();
  answer = bytes;
  const undiciVerdict = await viaUndici();
  return { relay: relayVerdict, undici: undiciVerdict };
}

const raw = (text: string) => Buffer.from(text, 'latin1');

/**
 * Where the relay may accept what undici refuses, and why. Interim responses
 * may precede any response (RFC 9110, 15.2); undici's client refuses an
 * unexpected one, the relay skips it.
 */
const LENIENT: ReadonlySet<string> = new Set(['an interim 100 Continue first']);

const TRAPS: readonly [string, string][] = [
  ['a plain Content-Length body', 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello'],
  ['a chunked body', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n'],
  ['a chunked body with trailers', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Checksum: abc\r\n\r\n'],
  ['a chunk extension', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhello\r\n0\r\n\r\n'],
  ['a close-delimited body', 'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end'],
  ['two different Content-Lengths', 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!'],
  ['a Content-Length list of different values', 'HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello!'],
  ['a negative Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nhello'],
  ['a Content-Length with a sign', 'HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello'],
  ['a Content-Length in hex', 'HTTP/1.1 200 OK\r\nContent-Length: 0x5\r\n\r\nhello'],
  ['Transfer-Encoding and Content-Length together', 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n'],
  ['a chunk size that is not hex', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n'],
  ['a chunk size with a sign', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n'],
  ['a chunk longer than its size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n'],
  ['a chunk without its CRLF', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n'],
  ['a huge chunk size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\nhello\r\n0\r\n\r\n'],
  ['a body cut before its Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort'],
  ['a chunked body cut before its last chunk', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n'],
  ['a folded header', 'HTTP/1.1 200 OK\r\nX-A: one\r\n two\r\nContent-Length: 5\r\n\r\nhello'],
  ['a header without a colon', 'HTTP/1.1 200 OK\r\nBroken header\r\nContent-Length: 5\r\n\r\nhello'],
  ['a space before the colon', 'HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\nhello'],
  ['a NUL in a header value', 'HTTP/1.1 200 OK\r\nX-A: a\u0000b\r\nContent-Length: 5\r\n\r\nhello'],
  ['a bare LF in a header value', 'HTTP/1.1 200 OK\r\nX-A: a\nContent-Length: 99\r\nContent-Length: 5\r\n\r\nhello'],
  ['a status line that is not HTTP/1.1', 'HTTP/2 200 OK\r\nContent-Length: 5\r\n\r\nhello'],
  ['a status code of two digits', 'HTTP/1.1 20 OK\r\nContent-Length: 5\r\n\r\nhello'],
  ['no status line at all', 'hello world\r\n\r\n'],
  ['an interim 100 Continue first', 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello'],
  ['a head over 64 KiB', `HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(70_000)}\r\nContent-Length: 5\r\n\r\nhello`],
  ['a connection closed in the head', 'HTTP/1.1 200 OK\r\nContent-Len'],
  ['an empty answer', ''],
];

/** A seeded PRNG (mulberry32): the same mutations on every run. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHABET = raw('\r\n:; -0123456789abcdefABCDEF\tzHTP/.,\u0000');

/** Random edits of a valid response: replace, insert or delete a byte, mostly in the head and the framing. */
function mutate(base: Buffer, random: () => number): Buffer {
  const bytes = [...base];
  const edits = 1 + Math.floor(random() * 3);
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(random() * bytes.length);
    const byte = ALPHABET[Math.floor(random() * ALPHABET.length)] ?? 0;
    const kind = random();
    if (kind < 0.4) bytes[at] = byte;
    else if (kind < 0.7) bytes.splice(at, 0, byte);
    else bytes.splice(at, 1);
  }
  return Buffer.from(bytes);
}

const FUZZ_CASES = 400;

describe("the relay's HTTP/1.1 reader against llhttp (undici)", () => {
  it.each(TRAPS)('%s: never accepts what llhttp refuses, and delivers what it delivers', async (name, text) => {
    const { relay: relayVerdict, undici } = await compare(raw(text));
    if (LENIENT.has(name)) expect(relayVerdict).toMatchObject({ ok: true, status: 200 });
    else if (!undici.ok) expect(relayVerdict).toEqual({ ok: false });
    else if (relayVerdict.ok) expect(relayVerdict).toEqual(undici);
  });

  it(`agrees on ${FUZZ_CASES} seeded mutations of valid responses, or is stricter`, async () => {
    const random = prng(20261125);
    const bases = TRAPS.slice(0, 5).map(([, text]) => raw(text));
    const stricter: string[] = [];
    const deadline = Date.now() + 60_000;
    let run = 0;
    for (; run < FUZZ_CASES && Date.now() < deadline; run++) {
      const bytes = mutate(bases[run % bases.length] ?? Buffer.alloc(0), random);
      const { relay: relayVerdict, undici } = await compare(bytes);
      const shown = JSON.stringify(bytes.toString('latin1').slice(0, 120));
      if (!undici.ok) expect(relayVerdict.ok, `accepted what llhttp refuses: ${shown}`).toBe(false);
      else if (relayVerdict.ok) expect(relayVerdict, `differs from llhttp on ${shown}`).toEqual(undici);
      else stricter.push(shown);
    }
    console.log(
      `relay vs llhttp: ${run} mutations, ${stricter.length} refused by the relay alone${stricter.length ? `, e.g. ${stricter.slice(0, 3).join(' ')}` : ''}`,
    );
    expect(run).toBeGreaterThan(100);
  }, 90_000);
});
