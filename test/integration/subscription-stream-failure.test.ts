/**
 * A subscription stream that fails after it began, over the two HTTP
 * protocols written here. graphql-js turns the failure of a source stream
 * into a last result with errors, masked as any resolver error is (a
 * GraphQL error keeps its words; anything else reads "Unexpected error."):
 * Apollo's multipart subscriptions send it as a payload part, then the
 * closing boundary, and Apollo Client's HttpLink reports it; callbacks send
 * it as `next`, then `complete`. Nothing the failure carried reaches the
 * client. A small schema whose stream throws is served with the same
 * plugins as the gateway's.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloClient, gql, HttpLink, InMemoryCache } from '@apollo/client';
import { GraphQLError } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { useMultipartSubscriptions } from '../../src/server/multipart-subscriptions.js';
import { SubscriptionCallbacks } from '../../src/server/subscription-callback.js';
import { type CallbackRouter, startCallbackRouter } from '../helpers/callback-router.js';

const EVENTS = { timeout: 100_000, interval: 20 };

let router: CallbackRouter;
let callbacks: SubscriptionCallbacks;
let server: Server;
let url: string;

beforeAll(async () => {
  router = await startCallbackRouter();
  callbacks = new SubscriptionCallbacks({ allowed: [`${router.origin}/callback/`], timeoutMs: 10_000, log: () => undefined });
  const schema = createSchema({
    typeDefs: `
      type Query { ok: Boolean }
      type Subscription { ticks(failWith: String!): Int }
    `,
    resolvers: {
      Subscription: {
        ticks: {
          async *subscribe(_: unknown, { failWith }: { failWith: string }) {
            yield { ticks: 1 };
            if (failWith === 'graphql') throw new GraphQLError('The feed broke off.', { extensions: { code: 'UPSTREAM_UNAVAILABLE' } });
            throw new Error('internal detail: /srv/secret');
          },
        },
      },
    },
  });
  const yoga = createYoga({ schema, plugins: [useMultipartSubscriptions(), callbacks.plugin()], logging: false, graphiql: false });
  server = createServer(yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});

afterAll(async () => {
  await callbacks?.close(10_000);
  await new Promise<void>((resolve) => {
    server?.close(() => resolve());
    server?.closeAllConnections();
  });
  await router?.close();
});

describe('a stream that fails after it began', { timeout: 120_000 }, () => {
  it("ends Apollo's multipart subscription with a payload part of the errors, then the closing boundary", async () => {
    for (const [failWith, error] of [
      ['graphql', { message: 'The feed broke off.', extensions: { code: 'UPSTREAM_UNAVAILABLE' } }],
      ['other', { message: 'Unexpected error.' }],
    ] as const) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'multipart/mixed;boundary="graphql";subscriptionSpec="1.0",application/json' },
        body: JSON.stringify({ query: `subscription { ticks(failWith: "${failWith}") }` }),
      });
      const text = await response.text();
      expect(text).not.toContain('/srv/secret');
      const parts = text
        .split('\r\n--graphql')
        .filter((p) => p.includes('{'))
        .map((p) => JSON.parse(p.slice(p.indexOf('\r\n\r\n'))) as unknown);
      expect(parts).toEqual([{ payload: { data: { ticks: 1 } } }, { payload: { errors: [expect.objectContaining(error)] } }]);
      expect(text.endsWith('\r\n--graphql--\r\n')).toBe(true);
    }
  });

  it("reaches Apollo Client's HttpLink as the subscription's error, after its event", async () => {
    const client = new ApolloClient({ link: new HttpLink({ uri: url }), cache: new InMemoryCache() });
    const events: unknown[] = [];
    const state: { error?: Error } = {};
    const subscription = client.subscribe({ query: gql('subscription { ticks(failWith: "graphql") }') }).subscribe({
      next: (result) => {
        if (result.error) state.error = result.error;
        else events.push(result.data);
      },
      error: (error: Error) => {
        state.error = error;
      },
    });
    await vi.waitFor(() => expect(state.error).toBeDefined(), EVENTS);
    expect(events).toEqual([{ ticks: 1 }]);
    expect(state.error?.message).toContain('The feed broke off.');
    subscription.unsubscribe();
  });

  it('sends the errors as next, then complete, to a router that subscribed with a callback', async () => {
    for (const [id, failWith, error] of [
      ['f1', 'graphql', { message: 'The feed broke off.', extensions: { code: 'UPSTREAM_UNAVAILABLE' } }],
      ['f2', 'other', { message: 'Unexpected error.' }],
    ] as const) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json;callbackSpec=1.0' },
        body: JSON.stringify({
          query: `subscription { ticks(failWith: "${failWith}") }`,
          extensions: { subscription: { callbackUrl: router.callbackUrl(id), subscriptionId: id, verifier: 'v', heartbeatIntervalMs: 0 } },
        }),
      });
      expect(await response.json()).toEqual({ data: null });
      await vi.waitFor(() => expect(router.messages.filter((m) => m.body.id === id).at(-1)?.body.action).toBe('complete'), EVENTS);
      expect(router.messages.filter((m) => m.body.id === id).map((m) => m.body)).toEqual([
        { kind: 'subscription', action: 'check', id, verifier: 'v' },
        { kind: 'subscription', action: 'next', id, verifier: 'v', payload: { data: { ticks: 1 } } },
        { kind: 'subscription', action: 'next', id, verifier: 'v', payload: { errors: [expect.objectContaining(error)] } },
        { kind: 'subscription', action: 'complete', id, verifier: 'v' },
      ]);
    }
    expect(JSON.stringify(router.messages)).not.toContain('/srv/secret');
    // The router records `complete` as it is posted; the gateway lets go of the subscription once that POST is answered.
    await vi.waitFor(() => expect(callbacks.size).toBe(0), EVENTS);
  });
});
