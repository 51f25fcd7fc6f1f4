/**
 * createTestApp(): the gateway in-process on an ephemeral port, in front of
 * a fresh sandbox GitLab, and a small fetch-based GraphQL client for it.
 */
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { loadConfig, type Config } from '../../src/config.js';
import { startGitlabSandbox, type GitlabSandbox, type GitlabSandboxOptions } from '../../src/sandbox/gitlab/server.js';
import { startHubzillaSandbox, type HubzillaSandbox, type HubzillaSandboxOptions, type RecordedRequest } from '../../src/sandbox/hubzilla/server.js';
import { buildApp, type App, type AppOptions } from '../../src/server/app.js';

export interface GraphQLResponse<T = Record<string, unknown>> {
  status: number;
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
  headers: Headers;
}

export interface TestApp {
  url: URL;
  sandbox: GitlabSandbox;
  /** The sandbox Hubzilla behind the gateway (started for every test app). */
  hubzilla: HubzillaSandbox;
  app: App;
  /** Posts a GraphQL operation; `token` is sent as Private-Token unless null. */
  gql<T = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
    options?: { token?: string | null; headers?: Record<string, string> },
  ): Promise<GraphQLResponse<T>>;
  /** Posts a typed document from test/operations (codegen), so its result is typed by the schema. */
  run<TResult, TVariables>(
    document: TypedDocumentNode<TResult, TVariables>,
    variables?: TVariables,
    options?: { token?: string | null; headers?: Record<string, string> },
  ): Promise<GraphQLResponse<TResult>>;
  /** GitLab API calls the sandbox received since the last reset. */
  calls(filter?: {
    method?: string;
    path?: RegExp | string;
  }): { method: string; path: string; query: Record<string, string[]>; headers: Record<string, string> }[];
  resetCalls(): void;
  /** Hubzilla API calls the sandbox received since the last reset; `path` is relative to /api/z/1.0/. */
  hubzillaCalls(filter?: { method?: string; path?: RegExp | string }): RecordedRequest[];
  resetHubzillaCalls(): void;
  close(): Promise<void>;
}

/** The Hubzilla release the sandboxes of this test run play: SANDBOX_HUBZILLA_VERSION, 8.8 by default. */
export function hubzillaVersion(): '8.8' | '10' {
  return process.env.SANDBOX_HUBZILLA_VERSION === '10' ? '10' : '8.8';
}

export async function createTestApp(
  options: {
    sandbox?: GitlabSandboxOptions;
    hubzillaSandbox?: HubzillaSandboxOptions;
    env?: Record<string, string>;
    gitlabUrl?: URL;
    /** Further buildApp options, e.g. graphiqlHeaders or logger. */
    app?: Partial<Omit<AppOptions, 'config' | 'gitlabUrl' | 'hubzillaUrl'>>;
  } = {},
): Promise<TestApp> {
  const sandbox = await startGitlabSandbox(options.sandbox ?? {});
  // SANDBOX_HUBZILLA_VERSION picks the release every test's sandbox plays (vitest.config.ts runs the Hubzilla tests under each).
  const hubzilla = await startHubzillaSandbox({ version: hubzillaVersion(), ...options.hubzillaSandbox });
  // LOG_FILE and LOG_LEVEL come from test/global-setup.ts, which checks the whole run's logs for credentials.
  // The answer cache is off unless a test turns it on: most tests write to the sandbox and read it back at once.
  const config: Config = loadConfig({ LOG_FILE: process.env.LOG_FILE, LOG_LEVEL: process.env.LOG_LEVEL, CACHE_MAX_AGE_MS: '0', ...options.env }, []);
  const app = buildApp({ ...options.app, config, gitlabUrl: options.gitlabUrl ?? new URL(sandbox.url), hubzillaUrl: new URL(hubzilla.url) });
  const url = await app.listen(0, '127.0.0.1');
  const testApp: TestApp = {
    url,
    sandbox,
    hubzilla,
    app,
    async gql(query, variables, { token = 'demo-token', headers = {} } = {}) {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json, application/json',
          ...(token === null ? {} : { 'private-token': token }),
          ...headers,
        },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await response.json()) as Omit<GraphQLResponse, 'status' | 'headers'>;
      return { ...body, status: response.status, headers: response.headers } as GraphQLResponse<never>;
    },
    run(document, variables, runOptions) {
      return testApp.gql(print(document), variables as Record<string, unknown> | undefined, runOptions);
    },
    calls(filter = {}) {
      return sandbox.requests.filter(
        (r) =>
          r.path.startsWith('/api/v4/') &&
          (!filter.method || r.method === filter.method) &&
          (!filter.path || (typeof filter.path === 'string' ? r.path === filter.path : filter.path.test(r.path))),
      );
    },
    resetCalls: () => sandbox.clearRequests(),
    hubzillaCalls(filter = {}) {
      const prefix = '/api/z/1.0/';
      return hubzilla.requests.filter(
        (r) =>
          r.path.startsWith(prefix) &&
          (!filter.method || r.method === filter.method) &&
          (!filter.path || (typeof filter.path === 'string' ? r.path.slice(prefix.length) === filter.path : filter.path.test(r.path.slice(prefix.length)))),
      );
    },
    resetHubzillaCalls: () => hubzilla.clearRequests(),
    async close() {
      await app.close();
      await sandbox.close();
      await hubzilla.close();
    },
  };
  return testApp;
}
