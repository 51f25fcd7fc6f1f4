/**
 * Reads the caller's GitLab credentials from a request and turns them into
 * the headers forwarded upstream. Query-parameter forms (`private_token`,
 * `access_token`, `sudo`, `job_token`) are accepted too but forwarded as
 * headers, so no token ever lands in an upstream URL or access log.
 */
import { InputError } from '../errors.js';

/** Where each credential may come from: header name, query name, and the upstream header it becomes. */
const SOURCES = [
  { header: 'private-token', query: 'private_token', upstream: 'private-token' },
  { header: 'authorization', query: 'access_token', upstream: 'authorization' },
  { header: 'sudo', query: 'sudo', upstream: 'sudo' },
  { header: 'job-token', query: 'job_token', upstream: 'job-token' },
] as const;

const MAX_CREDENTIAL_LENGTH = 4096;

/**
 * The credential headers to forward to GitLab. `Authorization` is forwarded
 * only with the Bearer scheme: other schemes are not GitLab's.
 * Throws InputError for a value no upstream could accept (control characters, oversize).
 */
export function gitlabCredentials(headers: Headers, url: URL): Record<string, string> {
  const forwarded: Record<string, string> = {};
  for (const source of SOURCES) {
    const fromQuery = url.searchParams.get(source.query);
    let value = headers.get(source.header) ?? (fromQuery === null ? null : source.header === 'authorization' ? `Bearer ${fromQuery}` : fromQuery);
    if (value === null || value.trim() === '') continue;
    value = value.trim();
    if (value.length > MAX_CREDENTIAL_LENGTH || /[\u0000-\u001f\u007f]/.test(value)) {
      throw new InputError(`The ${source.header} credential is malformed.`, [source.header]);
    }
    if (source.header === 'authorization' && !/^Bearer\s+\S+$/i.test(value)) continue;
    forwarded[source.upstream] = value;
  }
  return forwarded;
}
