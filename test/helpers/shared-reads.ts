/**
 * Reads in flight, held by the sandbox until a test lets them go: "in flight
 * at once" decided by the test, never by timing.
 */
import { expect, vi } from 'vitest';
import type { TestApp } from './app.js';
import { counter } from './metrics.js';

/** A promise the sandbox holds an answer on, and the way to let it go. */
export function gate(): { until: Promise<void>; open: () => void } {
  let open = () => {};
  const until = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { until, open };
}

/**
 * Shows that a read of `path` shared by two requests of `query` (demo's) is
 * cancelled only when both have gone: the first leaves while the call is
 * held, the second still gets its answer, `expected`, from that one call.
 */
export async function expectSharedReadOutlivesALeaver(t: TestApp, query: string, path: string, expected: unknown): Promise<void> {
  const joined = () => counter(t.app, 'duograph_upstream_cache_lookups_total', { outcome: 'joined' });
  const gets = () => t.calls({ method: 'GET', path }).length;
  const before = gets();
  const held = gate();
  t.sandbox.addFault({ method: 'GET', path, until: held.until, times: 1 });
  const leaving = new AbortController();
  const joinedBefore = await joined();
  const gone = fetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'private-token': 'demo-token' },
    body: JSON.stringify({ query }),
    signal: leaving.signal,
  }).catch((error: unknown) => error);
  await vi.waitFor(() => expect(gets()).toBe(before + 1));
  const staying = t.gql(query);
  await vi.waitFor(async () => expect((await joined()) - joinedBefore).toBe(1));
  leaving.abort();
  expect(await gone).toBeInstanceOf(Error);
  held.open();
  expect((await staying).data).toEqual(expected);
  expect(gets()).toBe(before + 1);
}

/**
 * Shows that three requests of `query` from demo and one from alice, in
 * flight at once, make two calls of `path` (one a scope) and all answer
 * `expected`; counts from the sandbox's record since the last reset.
 */
export async function expectOneCallPerScope(t: TestApp, query: string, path: string, expected: unknown): Promise<void> {
  const joined = () => counter(t.app, 'duograph_upstream_cache_lookups_total', { outcome: 'joined' });
  const gets = () => t.calls({ method: 'GET', path }).length;
  const held = gate();
  t.sandbox.addFault({ method: 'GET', path, until: held.until, times: 2 });
  const joinedBefore = await joined();
  const demo = [1, 2, 3].map(() => t.gql(query));
  const alice = t.gql(query, {}, { token: 'alice-token' });
  // Two calls reach the sandbox (one per scope) and two requests join demo's: then the answers may go.
  await vi.waitFor(async () => {
    expect(gets()).toBe(2);
    expect((await joined()) - joinedBefore).toBe(2);
  });
  held.open();
  for (const answer of await Promise.all([...demo, alice])) expect(answer.data).toEqual(expected);
  expect(gets()).toBe(2);
  expect(new Set(t.calls({ method: 'GET', path }).map((c) => c.headers['private-token']))).toEqual(new Set(['demo-token', 'alice-token']));
}

/**
 * Shows that an upstream 500 to a read of `path` that three requests of
 * `query` share reaches each of them once as UPSTREAM_ERROR, from one call,
 * and that the next request asks again and gets `expected`.
 */
export async function expectSharedFailureOnce(t: TestApp, query: string, path: string, expected: unknown): Promise<void> {
  const joined = () => counter(t.app, 'duograph_upstream_cache_lookups_total', { outcome: 'joined' });
  const gets = () => t.calls({ method: 'GET', path }).length;
  const before = gets();
  const held = gate();
  t.sandbox.addFault({ method: 'GET', path, until: held.until, status: 500, times: 1 });
  const joinedBefore = await joined();
  const pending = [1, 2, 3].map(() => t.gql(query));
  await vi.waitFor(async () => expect((await joined()) - joinedBefore).toBe(2));
  held.open();
  for (const answer of await Promise.all(pending)) {
    expect(answer.data).toEqual({ project: null });
    expect(answer.errors?.map((e) => e.extensions?.code)).toEqual(['UPSTREAM_ERROR']);
  }
  expect(gets()).toBe(before + 1);
  // Not stored: the next read asks again, and succeeds.
  expect((await t.gql(query)).data).toEqual(expected);
  expect(gets()).toBe(before + 2);
}
