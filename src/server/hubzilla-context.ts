/**
 * The Hubzilla part of a request's context, for HTTP requests and graphql-ws
 * connections alike: the caller's credential (X-Hubzilla-Authorization, or
 * the same key in connectionParams), a client and fresh loaders.
 */
import type { HubzillaContext } from '../schema/context.js';
import { HubzillaClient } from '../upstreams/hubzilla/client.js';
import { HubzillaLoaders } from '../upstreams/hubzilla/loaders.js';
import type { RequestScope } from '../request-scope.js';
import type { HttpClient } from '../upstreams/http.js';
import { HUBZILLA_CREDENTIAL_HEADER, hubzillaCredentials } from './credentials.js';

/** Finds the credential in headers or connectionParams, whatever the key's case (`X-Hubzilla-Authorization`). */
export function hubzillaCredentialFrom(source: Headers | Readonly<Record<string, unknown>> | null | undefined): unknown {
  if (!source) return undefined;
  // Yoga's Headers come from @whatwg-node/fetch, not the global class: test for get().
  if (typeof source.get === 'function') return (source as Headers).get(HUBZILLA_CREDENTIAL_HEADER) ?? undefined;
  const params = source as Readonly<Record<string, unknown>>;
  const key = Object.keys(params).find((k) => k.toLowerCase() === HUBZILLA_CREDENTIAL_HEADER);
  return key === undefined ? undefined : params[key];
}

/**
 * A per-request Hubzilla context. `http` is null when the gateway has no
 * Hubzilla upstream; every Hubzilla field then fails with UPSTREAM_UNAVAILABLE.
 */
export function createHubzillaContext(
  http: HttpClient | null,
  source: Headers | Readonly<Record<string, unknown>> | null | undefined,
  signal?: AbortSignal,
  scope?: RequestScope,
): HubzillaContext {
  const client = new HubzillaClient(http, hubzillaCredentials(hubzillaCredentialFrom(source)), signal, null, scope);
  return { client, loaders: new HubzillaLoaders(client) };
}
