/**
 * Log levels an operator can live with: a caller's mistake (bad input, an
 * upstream 401/403/404) is one info line without a stack, an upstream's
 * failure is one warn line, and `error` is kept for what needs acting on.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

interface Entry {
  level: number;
  msg: string;
  code?: string;
  path?: string;
  err?: unknown;
  stack?: unknown;
}

const dir = mkdtempSync(join(tmpdir(), 'duograph-log-levels-'));
const file = join(dir, 'gateway.log');
let sandboxed: TestApp;
let failing: TestApp;
let upstream: Server;

beforeAll(async () => {
  sandboxed = await createTestApp({ env: { LOG_FILE: file, LOG_LEVEL: 'info' } });
  // A GitLab that fails every call with a 500 whose body must not reach the log.
  upstream = createServer((_req, res) => {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: 'boom' }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  failing = await createTestApp({
    env: { LOG_FILE: file, LOG_LEVEL: 'info', UPSTREAM_RETRIES: '0' },
    gitlabUrl: new URL(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`),
  });
});
afterAll(async () => {
  await sandboxed.close();
  await failing.close();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

const entries = (): Entry[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Entry)
    .filter((e) => e.msg !== 'request completed');

describe('log levels', () => {
  it("logs a caller's mistakes at info, an upstream's failure at warn, both without a stack, and nothing at error", async () => {
    await sandboxed.gql('{ project(fullPath: "platform/core") { hooks { nodes { url } } } }');
    await sandboxed.gql('{ projects(first: 500) { nodes { name } } }');
    await failing.gql('{ project(id: "1") { name } }');
    const logged = entries();
    expect(logged.find((e) => e.code === 'FORBIDDEN')).toMatchObject({ level: 30, path: 'project.hooks' });
    expect(logged.find((e) => e.code === 'BAD_USER_INPUT')).toMatchObject({ level: 30, path: 'projects', msg: '"first" must be between 0 and 100, got 500.' });
    expect(logged.find((e) => e.code === 'UPSTREAM_ERROR')).toMatchObject({ level: 40, path: 'project' });
    expect(logged.filter((e) => e.level >= 50)).toEqual([]);
    expect(logged.filter((e) => e.err !== undefined || JSON.stringify(e).includes('"stack"'))).toEqual([]);
  });
});

describe('a caller who hangs up', () => {
  it('is not an upstream failure: its abandoned calls log at debug, count as client_closed, and leave the breaker alone', async () => {
    const own = join(dir, 'hangup.log');
    const slow = await createTestApp({ sandbox: { latencyMs: 400 }, env: { LOG_FILE: own, LOG_LEVEL: 'debug', BREAKER_THRESHOLD: '1' } });
    try {
      const abort = new AbortController();
      const aliases = Array.from({ length: 10 }, (_, i) => `p${i}: project(id: "${i + 1}") { name }`).join(' ');
      const answer = fetch(slow.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'private-token': 'demo-token' },
        body: JSON.stringify({ query: `{ ${aliases} }` }),
        signal: abort.signal,
      }).catch(() => null);
      await new Promise((resolve) => setTimeout(resolve, 150));
      abort.abort();
      await answer;
      await new Promise((resolve) => setTimeout(resolve, 800));
      const logged = readFileSync(own, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Entry & { outcome?: string });
      expect(logged.filter((e) => e.outcome === 'client_closed').length).toBeGreaterThan(0);
      expect(logged.filter((e) => e.outcome === 'client_closed').every((e) => e.level === 20)).toBe(true);
      expect(logged.filter((e) => e.level >= 40)).toEqual([]);
      expect(logged.some((e) => /could not be reached/.test(e.msg))).toBe(false);
      const metrics = await (await fetch(new URL('/metrics', slow.url))).text();
      expect(metrics).toMatch(/duograph_upstream_requests_total\{[^}]*status="client_closed"[^}]*\} [1-9]/);
      expect(metrics).not.toMatch(/status="UPSTREAM_UNAVAILABLE"/);
      // The breaker (threshold 1) did not open: the next caller is served.
      const next = await slow.gql('{ project(id: "1") { name } }');
      expect(next.data).toEqual({ project: { name: 'Core' } });
    } finally {
      await slow.close();
    }
  });
});
