/**
 * The 413 a client actually reads. A client sending a large body reads the
 * answer only once it is done sending (Node's fetch among them): a socket
 * destroyed under it is ECONNRESET, and the 413 is lost. So the rest of the
 * body is read and dropped, up to DRAIN_FACTOR times the limit (at least
 * 32 MiB), and the connection then serves the next request as any other
 * (its client was told nothing else: a close it did not expect fails the
 * next request its pool sends on it); a body larger than that is cut, as
 * there is no answering a sender that never stops.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

const DRAIN_FACTOR = 8;
const DRAIN_FLOOR = 32 * 1024 * 1024;

/** Answers 413 with `body` and drops the rest of the request body, up to the drain bound. */
export function refuseOversized(req: IncomingMessage, res: ServerResponse, maxBytes: number, body: Record<string, unknown>): void {
  const text = JSON.stringify(body);
  // No `connection: close`: Node would destroy the socket as soon as the answer is written, under a client still sending.
  res.writeHead(413, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
  if (req.complete) return;
  const bound = Math.max(DRAIN_FLOOR, DRAIN_FACTOR * maxBytes);
  let dropped = 0;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > bound) req.socket.destroy();
  });
  req.once('error', () => req.socket.destroy());
  req.resume();
}
