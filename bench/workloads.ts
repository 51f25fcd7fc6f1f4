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

/** The headers a gateway client sends for the workload's credential. */
export function gatewayCredentials(workload: Workload): Record<string, string> {
  return workload.upstream === 'gitlab'
    ? { 'private-token': workload.token }
    : { 'x-hubzilla-authorization': `Basic ${Buffer.from(workload.token).toString('base64')}` };
}
