/**
 * What a GraphQL answer says about caching it, and what a caller may ask of
 * the answer cache in an operation's `extensions`:
 *
 * - An answer over GET is `private` (it is one user's view), with a
 *   `max-age` no longer than the plain age left to the soonest-expiring
 *   stored upstream answer it used (never the webhook age: a browser's copy
 *   cannot be dropped), or `no-cache` when it used none; every POST (a
 *   mutation, or a query with credentials in its headers) is `no-store`.
 *   `Vary` names every header a credential comes in, so no shared cache
 *   hands one caller's answer to another.
 * - `extensions.cacheControl` ("no-cache", "max-age=N") says for one
 *   operation what the `Cache-Control` request header says for a request:
 *   the way graphql-ws and SSE callers, who cannot set headers per
 *   operation, ask for fresh data.
 * - An answer over GET carries an `ETag` (its text's digest); a GET whose
 *   `If-None-Match` names it gets a 304 without a body.
 * - `extensions.upstreamCache: true` asks how the request's upstream reads
 *   were served; the answer's `extensions.upstreamCache` counts them.
 */
import type { Plugin } from 'graphql-yoga';
import { type CacheUsage, type RequestScope, requestedMaxAgeMs } from '../request-scope.js';

/** Request headers a credential arrives in (credentials.ts, hubzilla-context.ts): the answer varies with each. */
const CREDENTIAL_HEADERS = 'Authorization, Private-Token, Job-Token, Sudo, X-Hubzilla-Authorization';

/** The `Cache-Control` of a GraphQL answer (see above). */
export function answerCacheControl(method: string, status: number, usage: Pick<CacheUsage, 'freshForMs'> | undefined): string {
  if (method !== 'GET' || status !== 200) return 'no-store';
  const seconds = usage?.freshForMs == null ? 0 : Math.floor(usage.freshForMs / 1000);
  return seconds > 0 ? `private, max-age=${seconds}` : 'private, no-cache';
}

/** The operation's own cache directive, from its `extensions.cacheControl`, if it gave one. */
export function extensionMaxAgeMs(extensions: unknown): number | undefined {
  if (!extensions || typeof extensions !== 'object') return undefined;
  const value = (extensions as Record<string, unknown>).cacheControl;
  return typeof value === 'string' ? requestedMaxAgeMs(value) : undefined;
}

function wantsUsage(extensions: unknown): boolean {
  return !!extensions && typeof extensions === 'object' && (extensions as Record<string, unknown>).upstreamCache === true;
}

interface ScopeContext {
  scope?: RequestScope;
  params?: { extensions?: unknown };
}

/** Whether an If-None-Match names `etag` (or is `*`), weak or strong alike (RFC 9110: weak comparison). */
function matchesEtag(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || bare(tag) === etag);
}

/** `etagOf`: the validator of the answer sent for a request (warm-answers.ts), when there is one. */
export function useCacheHeaders(etagOf: (request: Request) => string | undefined = () => undefined): Plugin {
  return {
    onExecute({ args }) {
      const context = args.contextValue as ScopeContext;
      if (!wantsUsage(context.params?.extensions)) return;
      return {
        onExecuteDone({ result, setResult }) {
          const usage = context.scope?.cache;
          // Streams (@defer, subscriptions) report nothing: their reads go on after the first part.
          if (!usage || Symbol.asyncIterator in result) return;
          const { hits, revalidated, joined, misses } = usage;
          setResult({ ...result, extensions: { ...result.extensions, upstreamCache: { hits, revalidated, joined, misses } } });
        },
      };
    },
    onResponse({ request, response, serverContext, setResponse, fetchAPI }) {
      // An event stream keeps the headers Yoga gives it.
      if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return;
      const usage = (serverContext as { scope?: RequestScope } | undefined)?.scope?.cache;
      response.headers.set('cache-control', answerCacheControl(request.method, response.status, usage));
      response.headers.append('vary', CREDENTIAL_HEADERS);
      const etag = request.method === 'GET' && response.status === 200 ? etagOf(request) : undefined;
      if (etag === undefined) return;
      response.headers.set('etag', etag);
      // The client holds this very answer: it may use it again (RFC 9110, 13.1.2).
      if (matchesEtag(request.headers.get('if-none-match'), etag)) {
        const headers = new fetchAPI.Headers();
        for (const name of ['cache-control', 'vary', 'etag']) headers.set(name, response.headers.get(name) ?? '');
        setResponse(new fetchAPI.Response(null, { status: 304, headers }));
      }
    },
  };
}
