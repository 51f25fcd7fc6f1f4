/**
 * What every resolver receives: the per-request upstream clients and
 * loaders. Built by the server for each GraphQL request (or subscription),
 * so nothing in it is shared between requests or callers.
 */
import type { GitlabClient } from '../upstreams/gitlab/client.js';
import type { GitlabLoaders } from '../upstreams/gitlab/loaders.js';

export interface GitlabContext {
  client: GitlabClient;
  loaders: GitlabLoaders;
}

export interface Context {
  gitlab: GitlabContext;
  /** Page size when a connection is asked with neither first nor last. */
  defaultPageSize: number;
}
