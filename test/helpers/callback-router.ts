/**
 * The router's end of the HTTP callback protocol (callback/1.0), for tests:
 * an HTTP server that records every message POSTed to /callback/<id> and
 * answers as a router does (204), or as the test says (404: forgotten).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CallbackMessage {
  path: string;
  headers: IncomingHttpHeaders;
  body: { kind: string; action: 'check' | 'next' | 'complete'; id: string; verifier: string; payload?: unknown; errors?: unknown[] };
}

export interface CallbackRouter {
  /** Origin of the router, e.g. http://127.0.0.1:40123. */
  origin: string;
  /** The callback URL of a subscription id. */
  callbackUrl(id: string): string;
  messages: CallbackMessage[];
  /** How the router answers a message; 204 unless set. */
  answer: (message: CallbackMessage) => number;
  close(): Promise<void>;
}

export async function startCallbackRouter(): Promise<CallbackRouter> {
  const router: CallbackRouter = {
    origin: '',
    callbackUrl: (id) => `${router.origin}/callback/${id}`,
    messages: [],
    answer: () => 204,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const message: CallbackMessage = { path: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
      router.messages.push(message);
      res.writeHead(router.answer(message), { 'subscription-protocol': 'callback/1.0' });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  router.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return router;
}
