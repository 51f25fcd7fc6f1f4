/**
 * buildApp(): the Yoga app and its HTTP server, wired to the upstream
 * clients. Listens only when asked, so tests and main share it.
 */
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
import { gitlabCredentials } from './credentials.js';
import { handleDownload } from './downloads.js';
import { EXAMPLE_QUERY } from './graphiql.js';
import { maskError } from './mask-error.js';

export interface AppOptions {
  config: Config;
  /** Base URL of GitLab (without /api/v4). */
  gitlabUrl: URL;
  /** Headers GraphiQL opens with, e.g. the sandbox's demo token. */
  graphiqlHeaders?: Record<string, string>;
}

export interface App {
  yoga: YogaServerInstance<Record<string, unknown>, Context>;
  server: Server;
  /** The GitLab upstream client, whose `calls` counts upstream calls. */
  gitlab: HttpClient;
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
  const schema = buildSchema();

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
      return { gitlab: { client, loaders: new GitlabLoaders(client) }, defaultPageSize: config.defaultPageSize };
    },
  });

  const server = createServer((req, res) => {
    if (!handleDownload(req, res, gitlab)) void yoga(req, res);
  });
  return {
    yoga,
    server,
    gitlab,
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const address = server.address() as AddressInfo;
          const shown = host && host !== '0.0.0.0' && host !== '::' ? host : 'localhost';
          resolve(new URL(`http://${shown.includes(':') ? `[${shown}]` : shown}:${address.port}/graphql`));
        });
      }),
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await gitlab.close();
    },
  };
}
