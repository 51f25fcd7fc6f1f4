/**
 * The GraphQL over HTTP specification's audit (graphql-http's auditServer,
 * the suite the spec's authors maintain) against the gateway: no MUST
 * requirement fails. SHOULD and MAY results that do not pass are printed.
 */
import { auditServer } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ sandbox: { clock: 'manual' } });
});
afterAll(async () => {
  await t.close();
});

describe('GraphQL over HTTP', () => {
  it('passes every MUST of the audit', async () => {
    const results = await auditServer({
      url: t.url.href,
      // GET requests must carry a preflight header (CSRF prevention): the audit's requests get it like a client's.
      fetchFn: (input: RequestInfo | URL, init?: RequestInit) => {
        const headers = new Headers(init?.headers);
        headers.set('graphql-preflight', '1');
        return fetch(input, { ...init, headers });
      },
    });
    const count = (status: string) => results.filter((r) => r.status === status).length;
    console.log(
      `GraphQL over HTTP audit: ${results.length} audits, ${count('ok')} ok, ${count('notice')} notices, ${count('warn')} warnings, ${count('error')} errors`,
    );
    for (const result of results) if (result.status !== 'ok') console.log(`  ${result.status}: ${result.name}`);
    expect(results.length).toBeGreaterThan(30);
    // An error is a MUST the server fails.
    expect(results.filter((r) => r.status === 'error').map((r) => r.name)).toEqual([]);
  }, 60_000);
});
