/**
 * What every resolver receives: the per-request upstream clients and
 * loaders. Built by the server for each GraphQL request (or subscription),
 * so nothing in it is shared between requests or callers.
 */
import type { RequestScope } from '../request-scope.js';
import type { GitlabClient } from '../upstreams/gitlab/client.js';
import type { GitlabLoaders } from '../upstreams/gitlab/loaders.js';
import type { HubzillaClient } from '../upstreams/hubzilla/client.js';
import type { HubzillaLoaders } from '../upstreams/hubzilla/loaders.js';
import type { SubscriptionHub } from '../subscriptions/hub.js';

export interface GitlabContext {
  client: GitlabClient;
  loaders: GitlabLoaders;
}

export interface HubzillaContext {
  /** Acts on the login's default channel; `forChannel()` for another. */
  client: HubzillaClient;
  loaders: HubzillaLoaders;
}

export interface Context {
  gitlab: GitlabContext;
  hubzilla: HubzillaContext;
  /** Page size when a connection is asked with neither first nor last. */
  defaultPageSize: number;
  /** Signs cursors that name upstream offsets, so a cursor the gateway did not issue costs no upstream call. */
  cursorKey: string;
  /** Subscriptions: the shared hub and what it needs of this caller. */
  live: LiveContext;
  /** The request this operation serves: its id, trace context and span (server/tracing.ts sets the operation's). */
  scope: RequestScope;
}

export interface LiveContext {
  hub: SubscriptionHub;
  /** The caller's GitLab credential headers: shared pollers are keyed by their hash and read with them. */
  credentials: Readonly<Record<string, string>>;
  /** Fires when the caller goes away: the SSE request's signal, or the WebSocket operation's. */
  signal: AbortSignal;
  /** Subscriptions without a credential are refused (REQUIRE_CREDENTIALS). */
  requireCredentials: boolean;
  /** Where GitLab should post webhooks (null before the server listens without PUBLIC_URL) and the token it must send. */
  receiver: { url(): string | null; secret: string; signingToken: string | null };
}
