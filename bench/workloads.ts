/**
 * The benchmark's workloads: the GraphQL documents in bench/workloads/, each
 * with a header saying what it costs at least and whom it asks:
 *
 *   # minimum-calls: 101   upstream calls the REST API needs for this query, at least
 *   # rounds: 2            dependent rounds of calls: the critical path is rounds x latency
 *   # upstream: gitlab     gitlab | hubzilla
 *   # token: demo-token    GitLab Private-Token, or Hubzilla login:password
 */
import { readdir, readFile } from 'node:fs/promises';

export type Upstream = 'gitlab' | 'hubzilla';

export interface Workload {
  /** File name without .graphql, e.g. `projects-jobs-100x20`. */
  name: string;
  /** Name of the document's one operation; the plain client dispatches on it. */
  operationName: string;
  query: string;
  minimumCalls: number;
  rounds: number;
  upstream: Upstream;
  token: string;
}

const DIRECTORY = new URL('./workloads/', import.meta.url);

function header(text: string, key: string, file: string): string {
  const value = new RegExp(`^# ${key}: (\\S+)`, 'm').exec(text)?.[1];
  if (value === undefined) throw new Error(`${file}: missing "# ${key}:" header`);
  return value;
}

function parse(file: string, query: string): Workload {
  const upstream = header(query, 'upstream', file);
  if (upstream !== 'gitlab' && upstream !== 'hubzilla') throw new Error(`${file}: upstream must be gitlab or hubzilla`);
  const operationName = /^(?:query|mutation) (\w+)/m.exec(query)?.[1];
  if (!operationName) throw new Error(`${file}: the document needs one named operation`);
  return {
    name: file.replace(/\.graphql$/, ''),
    operationName,
    query,
    minimumCalls: Number(header(query, 'minimum-calls', file)),
    rounds: Number(header(query, 'rounds', file)),
    upstream,
    token: header(query, 'token', file),
  };
}

/** Every workload, by file name. */
export async function loadWorkloads(): Promise<Workload[]> {
  const files = (await readdir(DIRECTORY)).filter((f) => f.endsWith('.graphql')).sort();
  return Promise.all(files.map(async (file) => parse(file, await readFile(new URL(file, DIRECTORY), 'utf8'))));
}

/** Clients the bench can give a GitLab token of their own (BENCH_GITLAB_OPTIONS seeds three tokens a client). */
export const MAX_CLIENTS = 64;
/** The seed's `user-N-token`s go to demo, alice and bob in turn (src/sandbox/gitlab/seed.ts). */
const TOKEN_TURN: Record<string, number> = { 'demo-token': 1, 'alice-token': 2, 'bob-token': 3 };

/**
 * The headers gateway client `client` sends for the workload's credential.
 * On GitLab each client has a token of its own, of the workload's user
 * (`user-N-token`): nothing one client's calls read is another's, as between
 * real users. Hubzilla's sandbox has one login for the channel: its clients share it.
 */
export function gatewayCredentials(workload: Workload, client = 0): Record<string, string> {
  if (workload.upstream !== 'gitlab') return { 'x-hubzilla-authorization': `Basic ${Buffer.from(workload.token).toString('base64')}` };
  const turn = TOKEN_TURN[workload.token];
  if (turn === undefined) return { 'private-token': workload.token };
  if (client >= MAX_CLIENTS) throw new Error(`at most ${MAX_CLIENTS} clients, each with a token of its own`);
  return { 'private-token': `user-${client * 3 + turn}-token` };
}
