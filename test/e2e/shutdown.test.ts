/**
 * Graceful shutdown: the server stops accepting connections, requests in
 * flight finish, WebSocket subscribers get close code 1001 (going away),
 * SSE subscriptions end. The production commands do all of it on SIGTERM
 * (test/e2e/production.test.ts).
 */
import { createClient as createSseClient } from 'graphql-sse';
import { describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { createTestApp } from '../helpers/app.js';

const QUERY = JSON.stringify({ query: '{ project(fullPath: "platform/core") { name } }' });
const post = (url: URL | string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'private-token': 'demo-token' }, body: QUERY });

/** A graphql-ws connection, raw, so its close code is seen as sent. */
async function wsSubscriber(url: URL): Promise<{ closed: Promise<{ code: number; reason: string }>; messages: unknown[] }> {
  const socket = new WebSocket(url.href.replace(/^http/, 'ws'), 'graphql-transport-ws');
  const messages: unknown[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise((resolve) => socket.once('open', resolve));
  socket.on('message', (data) => messages.push(JSON.parse(data.toString())));
  socket.send(JSON.stringify({ type: 'connection_init', payload: { 'Private-Token': 'demo-token' } }));
  await vi.waitFor(() => expect(messages).toContainEqual({ type: 'connection_ack' }));
  socket.send(
    JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { jobStatusUpdated(projectId: "1", jobId: "1014") { status } }' } }),
  );
  await vi.waitFor(() => expect(messages.length).toBeGreaterThanOrEqual(2));
  return { closed, messages };
}

describe('graceful shutdown', () => {
  it('finishes requests in flight, refuses new connections, closes WebSockets with 1001 and ends SSE subscriptions', async () => {
    const t = await createTestApp({ sandbox: { clock: 'manual', latencyMs: 400 } });
    try {
      const ws = await wsSubscriber(t.url);
      const sse = createSseClient({ url: t.url.href, headers: { 'private-token': 'demo-token' }, retryAttempts: 0, singleConnection: false });
      const events = sse.iterate({ query: 'subscription { jobStatusUpdated(projectId: "1", jobId: "1014") { status } }' });
      expect((await events.next()).value).toEqual({ data: { jobStatusUpdated: { status: 'PENDING' } } });

      const inFlight = post(t.url);
      await vi.waitFor(() => expect(t.app.inFlight.size).toBeGreaterThanOrEqual(2));
      const closing = t.app.close();

      // The request in flight still gets its answer.
      expect(await (await inFlight).json()).toEqual({ data: { project: { name: 'Core' } } });
      expect(await ws.closed).toEqual({ code: 1001, reason: 'Going away' });
      expect((await events.next()).done).toBe(true);
      await closing;
      await expect(post(t.url)).rejects.toThrow();
    } finally {
      await t.close();
    }
  });
});
