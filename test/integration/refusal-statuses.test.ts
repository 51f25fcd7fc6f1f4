/**
 * Refusals with the status GraphQL over HTTP and HTTP give them: a request
 * refused before execution is 400 under application/graphql-response+json,
 * bad GET parameters are 400, one limit refuses once, and an oversized body
 * gets a 413 its sender actually reads, however much it goes on sending.
 */
import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWebhook, SECRET } from '../helpers/subscriptions.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { MAX_COST: '50', GITLAB_WEBHOOK_SECRET: SECRET } });
});
afterAll(async () => {
  await t.close();
});

const RESPONSE_JSON = 'application/graphql-response+json';

async function post(
  body: unknown,
  accept = RESPONSE_JSON,
): Promise<{ status: number; body: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] } }> {
  const response = await fetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, 'private-token': 'demo-token' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as never };
}

describe('refused before execution', () => {
  it('is 400 with a code and no data when the cost limit refuses, and nothing goes upstream', async () => {
    t.resetCalls();
    const refused = await post({ query: '{ projects(first: 100) { nodes { jobs(first: 100) { nodes { id } } } } }' });
    expect(refused.status).toBe(400);
    expect(refused.body.data).toBeUndefined();
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', cost: { limit: 50 } });
    expect(t.calls()).toHaveLength(0);
  });

  it('says what is wrong with an id the estimate cannot read, rather than that the cost is unknown', async () => {
    const refused = await post({ query: '{ node(id: "garbage") { id } }' });
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.[0]).toMatchObject({ message: '"garbage" is not a duograph global id.', extensions: { code: 'BAD_USER_INPUT' } });
  });

  it.each(['variables', 'extensions'])('answers GET with %s that is not JSON with 400', async (name) => {
    const response = await fetch(`${t.url}?query=${encodeURIComponent('{ __typename }')}&${name}=${encodeURIComponent('{not json')}`, {
      headers: { accept: RESPONSE_JSON, 'graphql-preflight': '1' },
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors?: { message: string }[] };
    expect(body.errors?.[0]?.message).toMatch(new RegExp(name, 'i'));
  });

  it('refuses 100 unknown directives once, for the limit, without validating them one by one', async () => {
    const directives = Array.from({ length: 100 }, (_, i) => `@d${i}`).join(' ');
    const response = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: RESPONSE_JSON },
      body: JSON.stringify({ query: `{ __typename ${directives} }` }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: { extensions?: Record<string, unknown> }[] };
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]?.extensions).toMatchObject({ code: 'OPERATION_LIMIT', limit: { name: 'directives' } });
  });
});

/** Sends `total` bytes in 64 KB pieces without a Content-Length, as fast as the socket takes them; the status read, or the error. */
function stream(path: string, total: number, headers: Record<string, string>): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(new URL(path, t.url), { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    const piece = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const write = () => {
      while (sent < total) {
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', write);
      }
      req.end();
    };
    req.write('{"query":"{ __typename }","pad":"');
    write();
  });
}

describe('an oversized body', () => {
  it('gets a 413 that fetch reads, at 5 MB and at 20 MB, every time', async () => {
    for (const megabytes of [5, 5, 5, 5, 5, 20, 20]) {
      const response = await fetch(t.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }', pad: 'x'.repeat(megabytes * 1024 * 1024) }),
      });
      expect(response.status).toBe(413);
      expect(((await response.json()) as { errors: { message: string }[] }).errors[0]?.message).toBe('The request body is larger than 1048576 bytes.');
    }
  });

  it('leaves the connection to serve its next request, as a client pool expects of an answer without Connection: close', async () => {
    // One socket, kept alive: the second request goes on the connection the 413 came on, or fails if it was closed.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const send = (body: string) =>
      new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const req = request(
          t.url,
          { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
          (res) => {
            res.resume();
            res.once('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
          },
        );
        req.once('error', reject);
        req.end(body);
      });
    try {
      const big = JSON.stringify({ query: '{ __typename }', pad: 'x'.repeat(2 * 1024 * 1024) });
      expect(await send(big)).toEqual({ status: 413, reused: false });
      expect(await send(JSON.stringify({ query: '{ __typename }' }))).toEqual({ status: 200, reused: true });
      // Refused again on the same connection, and it still serves.
      expect(await send(big)).toEqual({ status: 413, reused: true });
      expect(await send(JSON.stringify({ query: '{ __typename }' }))).toEqual({ status: 200, reused: true });
    } finally {
      agent.destroy();
    }
  });

  it('gets a 413 its sender reads while it streams 20 MB without a length, on the GraphQL and the webhook route', async () => {
    for (let i = 0; i < 3; i++) {
      expect(await stream('/graphql', 20 * 1024 * 1024, {})).toBe(413);
      expect(await stream('/webhooks/gitlab', 20 * 1024 * 1024, { 'x-gitlab-token': SECRET, 'x-gitlab-event': 'Job Hook' })).toBe(413);
    }
    // And the gateway goes on serving.
    expect((await post({ query: '{ __typename }' })).status).toBe(200);
    expect((await postWebhook(t, '{}')).status).not.toBe(413);
  });
});
