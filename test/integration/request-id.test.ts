/**
 * One request id end to end: taken from a valid incoming X-Request-Id, else
 * made; returned in the response; on every log line of the request; sent to
 * GitLab and Hubzilla as X-Request-Id; and the upstream's own id (GitLab's
 * correlation id) recorded on the upstream call's log line. Without tracing,
 * the caller's W3C trace context goes on to the upstreams unchanged.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createTestApp, type TestApp } from '../helpers/app.js';

interface Entry {
  msg: string;
  requestId?: string;
  upstream?: string;
  route?: string;
  upstreamRequestId?: string;
  traceId?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const dir = mkdtempSync(join(tmpdir(), 'duograph-request-id-'));
const file = join(dir, 'gateway.log');
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ env: { LOG_FILE: file, LOG_LEVEL: 'debug' } });
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const entries = (): Entry[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Entry);

/** Waits for the `request completed` line of a request id (it is written when the response closes). */
async function linesOf(requestId: string): Promise<Entry[]> {
  for (let i = 0; i < 50; i++) {
    const lines = entries().filter((e) => e.requestId === requestId);
    if (lines.some((e) => e.msg === 'request completed')) return lines;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no request completed line for ${requestId}`);
}

describe('request id', () => {
  it('keeps a valid incoming id: in the response, on every log line of the request, and sent to GitLab and Hubzilla', async () => {
    t.resetCalls();
    t.resetHubzillaCalls();
    const before = entries().length;
    const response = await t.gql('{ project(fullPath: "platform/core") { name } channel { nickname } }', undefined, {
      headers: { 'x-request-id': 'frontend-7f3a:42', 'x-hubzilla-authorization': `Basic ${Buffer.from('alice:alice-pass').toString('base64')}` },
    });
    expect(response.errors).toBeUndefined();
    expect(response.headers.get('x-request-id')).toBe('frontend-7f3a:42');
    const gitlab = t.calls();
    const hubzilla = t.hubzillaCalls();
    expect(gitlab.length).toBeGreaterThan(0);
    expect(hubzilla.length).toBeGreaterThan(0);
    for (const call of [...gitlab, ...hubzilla]) expect(call.headers['x-request-id']).toBe('frontend-7f3a:42');

    const lines = await linesOf('frontend-7f3a:42');
    // Every line written while the request was served carries its id: none of the new lines lacks one.
    const during = entries().slice(before);
    expect(during.filter((e) => e.requestId === undefined)).toEqual([]);
    expect(lines.map((e) => e.msg)).toEqual(expect.arrayContaining(['request received', 'upstream call', 'request completed']));
    // The GitLab call's line names the correlation id GitLab answered with.
    const upstreamLines = lines.filter((e) => e.msg === 'upstream call' && e.upstream === 'gitlab');
    expect(upstreamLines.map((e) => e.upstreamRequestId).sort()).toEqual(
      t.sandbox.requests
        .filter((r) => r.headers['x-request-id'] === 'frontend-7f3a:42')
        .map((r) => r.responseRequestId)
        .sort(),
    );
    expect(upstreamLines[0]?.upstreamRequestId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it("names the request on its failed fields' log lines, which Yoga writes without it", async () => {
    const response = await t.gql('{ project(fullPath: "platform/core") { hooks { nodes { url } } } }', undefined, {
      headers: { 'x-request-id': 'failing-field-1' },
    });
    const code = response.errors?.[0]?.extensions?.code;
    expect(code).toBe('FORBIDDEN');
    const lines = await linesOf('failing-field-1');
    expect(lines.find((e) => (e as { code?: string }).code === code)).toMatchObject({ requestId: 'failing-field-1', msg: expect.stringMatching(/403/) });
  });

  it('makes a new id when none comes, when the one given is not a printable token of at most 128 characters, or when it is shaped like a credential', async () => {
    const ids: string[] = [];
    for (const given of [undefined, 'has spaces in it', 'x'.repeat(129), 'quote"d', '', 'glpat-abcdefghij0123456789', 'Bearer.glpat-0123456789abcdefgh']) {
      t.resetCalls();
      const response = await t.gql('{ project(fullPath: "platform/core") { name } }', undefined, {
        headers: given === undefined ? {} : { 'x-request-id': given },
      });
      const id = response.headers.get('x-request-id') ?? '';
      expect(id).toMatch(UUID);
      expect(t.calls()[0]?.headers['x-request-id']).toBe(id);
      ids.push(id);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('answers with the id on every route: a refused body, health, GraphiQL', async () => {
    const refused = await fetch(t.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'bad-body' }, body: '{' });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('x-request-id')).toBe('bad-body');
    const health = await fetch(new URL('/healthz', t.url), { headers: { 'x-request-id': 'probe-1' } });
    expect(health.headers.get('x-request-id')).toBe('probe-1');
    const page = await fetch(t.url, { headers: { accept: 'text/html' } });
    expect(page.headers.get('x-request-id')).toMatch(UUID);
  });

  it("passes the caller's valid trace context on to the upstreams unchanged while the gateway does not trace, and drops an invalid one", async () => {
    t.resetCalls();
    await t.gql('{ project(fullPath: "platform/core") { name } }', undefined, { headers: { traceparent: TRACEPARENT, tracestate: 'vendor=abc' } });
    expect(t.calls()[0]?.headers.traceparent).toBe(TRACEPARENT);
    expect(t.calls()[0]?.headers.tracestate).toBe('vendor=abc');
    t.resetCalls();
    await t.gql('{ project(fullPath: "platform/core") { name } }', undefined, {
      headers: { traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01', tracestate: 'vendor=abc' },
    });
    expect(t.calls()[0]?.headers.traceparent).toBeUndefined();
    expect(t.calls()[0]?.headers.tracestate).toBeUndefined();
    // No trace id on log lines: nothing is recorded.
    expect(entries().filter((e) => e.traceId !== undefined)).toEqual([]);
  });

  it("gives a graphql-ws connection the upgrade request's id, for its operations' upstream calls and log lines", async () => {
    t.resetCalls();
    const socket = new WebSocket(t.url.href.replace('http', 'ws'), 'graphql-transport-ws', { headers: { 'x-request-id': 'ws-connection-9' } });
    const messages: { type: string; payload?: unknown }[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(String(data)) as { type: string }));
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { 'Private-Token': 'demo-token' } }));
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: '{ project(fullPath: "platform/core") { name } }' } }));
    for (let i = 0; i < 100 && !messages.some((m) => m.type === 'complete'); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    socket.close();
    expect(messages.find((m) => m.type === 'next')?.payload).toEqual({ data: { project: { name: 'Core' } } });
    expect(t.calls().map((c) => c.headers['x-request-id'])).toEqual(t.calls().map(() => 'ws-connection-9'));
    expect(entries().some((e) => e.requestId === 'ws-connection-9' && e.msg === 'upstream call')).toBe(true);
  });
});
