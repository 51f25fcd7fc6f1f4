/**
 * Reads the caller's GitLab credentials from a request and turns them into
 * the headers forwarded upstream. Query-parameter forms (`private_token`,
 * `access_token`, `sudo`, `job_token`) are accepted too but forwarded as
 * headers, so no token ever lands in an upstream URL or access log.
 */
import type { Plugin } from 'graphql-yoga';
import { InputError } from '../errors.js';
import type { RequestScope } from '../request-scope.js';
import type { HubzillaAuth } from '../upstreams/hubzilla/client.js';

/** Where each credential may come from: header name, query name, and the upstream header it becomes. */
const SOURCES = [
  { header: 'private-token', query: 'private_token', upstream: 'private-token' },
  { header: 'authorization', query: 'access_token', upstream: 'authorization' },
  { header: 'sudo', query: 'sudo', upstream: 'sudo' },
  { header: 'job-token', query: 'job_token', upstream: 'job-token' },
] as const;

const MAX_CREDENTIAL_LENGTH = 4096;

/**
 * The credential headers to forward to GitLab. `Authorization` takes the
 * Bearer scheme only: a bare token or another scheme would otherwise be
 * dropped, and the caller served as anonymous without a word.
 * Throws InputError for a value no upstream could accept (control characters, oversize, another scheme).
 */
export function gitlabCredentials(headers: Pick<Headers, 'get'>, url: URL): Record<string, string> {
  const forwarded: Record<string, string> = {};
  for (const source of SOURCES) {
    const fromQuery = url.searchParams.get(source.query);
    let value = headers.get(source.header) ?? (fromQuery === null ? null : source.header === 'authorization' ? `Bearer ${fromQuery}` : fromQuery);
    if (value === null || value.trim() === '') continue;
    value = value.trim();
    if (value.length > MAX_CREDENTIAL_LENGTH || /[\u0000-\u001f\u007f]/.test(value)) {
      throw new InputError(`The ${source.header} credential is malformed.`, [source.header]);
    }
    if (source.header === 'authorization' && !/^Bearer\s+\S+$/i.test(value)) {
      throw new InputError(
        'Authorization must be "Bearer <token>" (a GitLab OAuth2 or personal access token); a personal access token may also go alone in Private-Token. Hubzilla credentials go in X-Hubzilla-Authorization.',
        [source.header],
      );
    }
    forwarded[source.upstream] = value;
  }
  // Sudo acts as another user on behalf of a token: alone, it could only earn a 401 on every call.
  if (forwarded.sudo !== undefined && Object.keys(forwarded).length === 1) delete forwarded.sudo;
  return forwarded;
}

/** The header that carries Hubzilla credentials: plain `Authorization` belongs to GitLab. */
export const HUBZILLA_CREDENTIAL_HEADER = 'x-hubzilla-authorization';

/**
 * The Authorization value to forward to Hubzilla, from `X-Hubzilla-Authorization`
 * (HTTP) or the same key in graphql-ws `connectionParams`: `Basic <base64
 * login:password>` (login = channel nickname or account email) or `Bearer
 * <OAuth2 token>`. Null when none was sent. A malformed value, and a Basic
 * password containing `:`, give an InputError instead of a credential: the
 * hub splits Basic credentials with explode(':') and would cut such a
 * password, answering with a bare 401. The error is raised when a Hubzilla
 * field runs, so GitLab fields of the same request are unaffected.
 */
export function hubzillaCredentials(value: unknown): HubzillaAuth {
  if (value === undefined || value === null) return null;
  const text = typeof value === 'string' ? value.trim() : '';
  if (text === '')
    return typeof value === 'string'
      ? null
      : { error: new InputError('The X-Hubzilla-Authorization credential must be a string.', [HUBZILLA_CREDENTIAL_HEADER]) };
  if (text.length > MAX_CREDENTIAL_LENGTH || /[\u0000-\u001f\u007f]/.test(text)) {
    return { error: new InputError('The X-Hubzilla-Authorization credential is malformed.', [HUBZILLA_CREDENTIAL_HEADER]) };
  }
  const bearer = /^Bearer\s+([A-Za-z0-9._~+/=-]+)$/i.exec(text);
  if (bearer) return { authorization: `Bearer ${bearer[1]}` };
  const basic = /^Basic\s+([A-Za-z0-9+/]+={0,2})$/i.exec(text);
  if (!basic) {
    return { error: new InputError('X-Hubzilla-Authorization must be "Basic <base64 login:password>" or "Bearer <token>".', [HUBZILLA_CREDENTIAL_HEADER]) };
  }
  const decoded = Buffer.from(basic[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) {
    return { error: new InputError('X-Hubzilla-Authorization Basic credentials must encode "login:password".', [HUBZILLA_CREDENTIAL_HEADER]) };
  }
  if (decoded.includes(':', colon + 1)) {
    return {
      error: new InputError(
        'Hubzilla cannot log in with a password that contains ":" (it cuts Basic passwords at the colon). Change the password or use an OAuth2 Bearer token.',
        [HUBZILLA_CREDENTIAL_HEADER],
      ),
    };
  }
  return { authorization: `Basic ${basic[1]}` };
}

/** Names the gateway reads credentials from, exactly. */
const ACCEPTED = new Set(['private-token', 'authorization', 'sudo', 'job-token', HUBZILLA_CREDENTIAL_HEADER]);
/** What the accepted names and their usual misspellings read as, letters only: `Private_Token`, `X-Private-Token`, `JobToken`, … */
const NEAR = new Set([
  'privatetoken',
  'xprivatetoken',
  'jobtoken',
  'xjobtoken',
  'accesstoken',
  'xaccesstoken',
  'hubzillaauthorization',
  'xhubzillaauthorization',
]);

/** The header (or connectionParams) names that look like a credential but are not read as one. */
export function nearMissCredentials(names: Iterable<string>): string[] {
  const missed: string[] = [];
  for (const name of names) {
    const lower = name.toLowerCase();
    if (!ACCEPTED.has(lower) && NEAR.has(lower.replace(/[^a-z]/g, '')) && missed.length < 5) missed.push(lower.slice(0, 64));
  }
  return missed;
}

/**
 * Says in a result's extensions which near-miss credential names were
 * ignored (`Private_Token`: GitLab reads `Private-Token`), so a caller served
 * as anonymous learns why, without the value ever being echoed.
 */
export function useCredentialHints(): Plugin {
  return {
    onExecute({ args }) {
      const ignored = (args.contextValue as { scope?: RequestScope }).scope?.ignoredCredentials;
      if (!ignored?.length) return;
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          const hint = `Ignored, not read as credentials: ${ignored.join(', ')}. The gateway reads Private-Token, Authorization: Bearer <token>, Job-Token, Sudo and X-Hubzilla-Authorization.`;
          setResult({ ...result, extensions: { ...result.extensions, credentials: { ignored, hint } } });
        },
      };
    },
  };
}
