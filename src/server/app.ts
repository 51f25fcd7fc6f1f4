/**
 * buildApp(): the Yoga app and its HTTP server, wired to the upstream
 * clients. Listens only when asked, so tests and main share it.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { createFetch } from '@whatwg-node/fetch';
import { createGraphQLError, createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Config } from '../config.js';
import { InputError } from '../errors.js';
import type { Context } from '../schema/context.js';
import { buildSchema } from '../schema/index.js';
import { GitlabClient } from '../upstreams/gitlab/client.js';
import { GitlabLoaders } from '../upstreams/gitlab/loaders.js';
import { HttpClient } from '../upstreams/http.js';
import { createMemoryEventBus, createRedisEventBus, type EventBus } from '../subscriptions/event-bus.js';
import { SubscriptionHub } from '../subscriptions/hub.js';
import { gitlabCredentials } from './credentials.js';
import { handleDownload } from './downloads.js';
import { createHubzillaContext } from './hubzilla-context.js';
import { handleHubzillaDownload } from './hubzilla-downloads.js';
import { EXAMPLE_QUERY } from './graphiql.js';
import { maskError } from './mask-error.js';
import { GITLAB_WEBHOOK_PATH, handleGitlabWebhook } from './webhooks.js';
import { attachWebSocket, type WebSocketEndpoint } from './websocket.js';

export interface AppOptions {
  config: Config;
  /** Base URL of GitLab (without /api/v4). */
  gitlabUrl: URL;
  /** Base URL of Hubzilla (without /api/z/1.0); without it Hubzilla fields fail with UPSTREAM_UNAVAILABLE. */
  hubzillaUrl?: URL;
  /** Headers GraphiQL opens with, e.g. the sandbox's demo token. */
  graphiqlHeaders?: Record<string, string>;
  /** Reports background failures (pollers, Redis); never given a credential. Default: stderr. */
  log?: (message: string) => void;
}

export interface App {
  yoga: YogaServerInstance<Record<string, unknown>, Context>;
  server: Server;
  /** The GitLab upstream client, whose `calls` counts upstream calls. */
  gitlab: HttpClient;
  /** The Hubzilla upstream client (null when none is configured), whose `calls` counts upstream calls. */
  hubzilla: HttpClient | null;
  /** Subscriptions: pollers, streams and bus topics (see `hub.stats()`). */
  hub: SubscriptionHub;
  /** graphql-ws on the GraphQL path. */
  websocket: WebSocketEndpoint;
  /** URL GitLab should post webhooks to: PUBLIC_URL's, else the listening address's; null before listening. */
  webhookUrl(): string | null;
  /** Starts listening; resolves with the URL of the server. */
  listen(port: number, host?: string): Promise<URL>;
  /** Stops the server and the upstream pools. */
  close(): Promise<void>;
}

export function buildApp(options: AppOptions): App {
  const { config } = options;
  const gitlab = new HttpClient({
    name: 'gitlab',
    baseUrl: new URL('api/v4', options.gitlabUrl.href.endsWith('/') ? options.gitlabUrl : `${options.gitlabUrl.href}/`),
    timeoutMs: config.upstreamTimeoutMs,
    connections: config.upstreamConnections,
    maxResponseBytes: config.upstreamMaxResponseBytes,
  });
  const hubzilla = options.hubzillaUrl
    ? new HttpClient({
        name: 'hubzilla',
        baseUrl: new URL('api/z/1.0', options.hubzillaUrl.href.endsWith('/') ? options.hubzillaUrl : `${options.hubzillaUrl.href}/`),
        timeoutMs: config.upstreamTimeoutMs,
        connections: config.upstreamConnections,
        maxResponseBytes: config.upstreamMaxResponseBytes,
      })
    : null;
  const schema = buildSchema();
  const log = options.log ?? ((message: string) => console.error(`duograph: ${message}`));
  const bus: EventBus = config.redisUrl ? createRedisEventBus(config.redisUrl, log) : createMemoryEventBus();
  const hub = new SubscriptionHub({ http: gitlab, bus, pollIntervalMs: config.pollIntervalMs, pollMaxIntervalMs: config.pollMaxIntervalMs, log });
  // Without a configured secret, one per process: enough for one instance and the hooks it registers itself.
  const webhookSecret = config.gitlabWebhookSecret ?? randomBytes(32).toString('base64url');
  let listeningOrigin: string | null = null;
  const webhookUrl = () => {
    const base = config.publicUrl?.href.replace(/\/$/, '') ?? listeningOrigin;
    return base === null ? null : `${base}${GITLAB_WEBHOOK_PATH}`;
  };

  const yoga = createYoga<Record<string, unknown>, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    maskedErrors: { maskError, isDev: false },
    graphiql: {
      title: 'duograph',
      defaultQuery: EXAMPLE_QUERY,
      headers: JSON.stringify(options.graphiqlHeaders ?? {}, null, 2),
      shouldPersistHeaders: false,
    },
    renderGraphiQL,
    // Multipart uploads: bounded here, before any resolver runs.
    fetchAPI: createFetch({ formDataLimits: { fileSize: config.maxUploadBytes, files: 10, fieldSize: 1024 * 1024, fields: 100 } }),
    // Multipart and GET requests need a header a cross-site form cannot send.
    plugins: [useCSRFPrevention({ requestHeaders: ['x-graphql-yoga-csrf', 'graphql-preflight', 'apollo-require-preflight'] })],
    context: ({ request }) => {
      let credentials: Record<string, string>;
      try {
        credentials = gitlabCredentials(request.headers, new URL(request.url));
      } catch (error) {
        if (error instanceof InputError) {
          throw createGraphQLError(error.message, { extensions: { code: error.code, http: { status: 400 } } });
        }
        throw error;
      }
      const client = new GitlabClient(gitlab, credentials, request.signal);
      return {
        gitlab: { client, loaders: new GitlabLoaders(client) },
        hubzilla: createHubzillaContext(hubzilla, request.headers, request.signal),
        defaultPageSize: config.defaultPageSize,
        live: { hub, credentials, signal: request.signal, requireCredentials: config.requireCredentials, receiver: { url: webhookUrl, secret: webhookSecret } },
      };
    },
  });

  const server = createServer((req, res) => {
    if (handleGitlabWebhook(req, res, { secret: webhookSecret, maxBytes: config.webhookMaxBytes, hub, log })) return;
    if (!handleDownload(req, res, gitlab) && !handleHubzillaDownload(req, res, hubzilla)) void yoga(req, res);
  });
  const websocket = attachWebSocket({
    server,
    yoga,
    requireCredentials: config.requireCredentials,
    verify: (credentials) => new GitlabClient(gitlab, credentials).verifyCredentials(),
  });
  return {
    yoga,
    server,
    gitlab,
    hubzilla,
    hub,
    websocket,
    webhookUrl,
    listen: async (port, host) => {
      await bus.ready();
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const address = server.address() as AddressInfo;
          const shown = host && host !== '0.0.0.0' && host !== '::' ? host : 'localhost';
          // Webhooks from a sandbox on this machine: a literal loopback address, since "localhost" may resolve to ::1 first.
          const loopback = host === '::' ? '::1' : !host || host === '0.0.0.0' ? '127.0.0.1' : host;
          listeningOrigin = `http://${loopback.includes(':') ? `[${loopback}]` : loopback}:${address.port}`;
          resolve(new URL(`http://${shown.includes(':') ? `[${shown}]` : shown}:${address.port}/graphql`));
        });
      });
    },
    close: async () => {
      await websocket.close();
      hub.close();
      await bus.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await gitlab.close();
      await hubzilla?.close();
    },
  };
}
