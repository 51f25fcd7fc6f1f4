/** Subscription clients for tests: real graphql-ws and graphql-sse clients read with deadlines, and the webhook receiver. */
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { expect, vi } from 'vitest';
import WebSocket from 'ws';
import type { TestApp } from './app.js';

/** The webhook secret the subscription tests configure (GITLAB_WEBHOOK_SECRET). */
export const SECRET = 'test-webhook-secret-0123456789';

export type Result = { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };

/** Reads a subscription through an iterator, with a deadline per result so a missing event fails fast. */
export class Reader {
  constructor(private readonly iterator: AsyncIterableIterator<unknown>) {}

  async next(timeoutMs = 5_000): Promise<Result> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no result within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const result = await Promise.race([this.iterator.next(), timeout]);
      if (result.done) return { data: null, errors: [{ message: 'completed' }] };
      return result.value as Result;
    } finally {
      clearTimeout(timer);
    }
  }

  async take(n: number): Promise<Result[]> {
    const results: Result[] = [];
    for (let i = 0; i < n; i++) results.push(await this.next());
    return results;
  }

  /** True when the stream completes within the deadline. */
  async completes(timeoutMs = 5_000): Promise<boolean> {
    const deadline = new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), timeoutMs).unref());
    const result = await Promise.race([this.iterator.next(), deadline]);
    return result !== 'open' && result.done === true;
  }

  async stop(): Promise<void> {
    await this.iterator.return?.();
  }
}

export function wsClient(t: TestApp, connectionParams: Record<string, unknown> = { 'Private-Token': 'demo-token' }): WsClient {
  return createWsClient({ url: t.url.href.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams, retryAttempts: 0, lazy: true });
}

export function wsSubscribe(client: WsClient, query: string, variables?: Record<string, unknown>): Reader {
  return new Reader(client.iterate({ query, variables }));
}

export function sseSubscribe(
  t: Pick<TestApp, 'url'>,
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = { 'private-token': 'demo-token' },
): Reader {
  const client = createSseClient({ url: t.url.href, headers, retryAttempts: 0, singleConnection: false });
  return new Reader(client.iterate({ query, variables: variables ?? {} }));
}

/** Waits until no subscription stream, poller, timer or bus topic is left. */
export async function expectAllReleased(t: TestApp): Promise<void> {
  await vi.waitFor(() => expect(t.app.hub.stats()).toEqual({ pollers: 0, timers: 0, topics: 0, streams: 0 }), { interval: 10 });
}

export async function postWebhook(t: TestApp, body: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const response = await fetch(new URL('/webhooks/gitlab', t.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gitlab-token': SECRET, 'x-gitlab-event': 'Job Hook', ...headers },
    body,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}
