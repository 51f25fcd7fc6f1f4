/**
 * The plain REST client's transport: one undici keep-alive Pool per upstream,
 * configured like the gateway's (src/upstreams/http.ts: same connection
 * count, no pipelining, 30 s keep-alive, timeouts), and a GET that parses
 * JSON. What a hand-written client would do, without the gateway's per-call
 * error mapping, abort signals, size caps or call counting.
 */
import { Pool } from 'undici';
import type { Upstream } from '../workloads.js';

export type Query = Record<string, string | number>;

/** GETs a JSON resource from an upstream, with the caller's credential headers. */
export type RestGet = <T = unknown>(upstream: Upstream, path: string, query?: Query) => Promise<T>;

export interface RestClient {
  /** A RestGet that sends these credential headers on every call. */
  withCredentials(headers: Record<string, string>): RestGet;
  close(): Promise<void>;
}

const API_PATH: Record<Upstream, string> = { gitlab: '/api/v4/', hubzilla: '/api/z/1.0/' };

export function createRestClient(options: { gitlabUrl: string; hubzillaUrl: string; connections: number; timeoutMs?: number }): RestClient {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const pool = (origin: string) =>
    new Pool(origin, { connections: options.connections, pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const pools: Record<Upstream, Pool> = { gitlab: pool(options.gitlabUrl), hubzilla: pool(options.hubzillaUrl) };
  return {
    withCredentials(headers) {
      return async <T>(upstream: Upstream, path: string, query: Query = {}) => {
        const search = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
        const response = await pools[upstream].request({
          method: 'GET',
          path: `${API_PATH[upstream]}${path}${search ? `?${search}` : ''}`,
          headers: { accept: 'application/json', ...headers },
        });
        if (response.statusCode !== 200) {
          await response.body.dump();
          throw new Error(`${upstream} ${path}: ${response.statusCode}`);
        }
        return (await response.body.json()) as T;
      };
    },
    async close() {
      await Promise.all([pools.gitlab.close(), pools.hubzilla.close()]);
    },
  };
}
