/**
 * Authentication of the sandbox GitLab: personal/OAuth tokens from the
 * `Private-Token` header, `Authorization: Bearer`, `?private_token=` or
 * `?access_token=`, and admin impersonation with `Sudo` / `?sudo=`. Bodies
 * and order of checks follow lib/api/helpers.rb (`sudo!`).
 */
import type { JsonResponse } from '../http-util.js';
import type { GitlabStore, SandboxUser } from './store.js';

export type AuthResult = { ok: true; user: SandboxUser | null } | { ok: false; response: JsonResponse };

const UNAUTHORIZED: JsonResponse = { status: 401, body: { message: '401 Unauthorized' } };

function last(values: string[] | undefined): string | undefined {
  return values?.[values.length - 1];
}

function tokenOf(headers: Record<string, string>, query: Record<string, string[]>): string | undefined {
  const privateToken = headers['private-token'] ?? last(query.private_token);
  if (privateToken !== undefined) return privateToken;
  const bearer = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '');
  if (bearer?.[1] !== undefined) return bearer[1].trim();
  return last(query.access_token);
}

/**
 * Whom GitLab's rate limits count a request against (Gitlab::RackAttack::Request
 * and Gitlab::Auth::RequestAuthenticator): the token's user (`user:<id>`,
 * whatever header carried it, Sudo aside), a CI job token's job user, or null
 * for a request without a token GitLab accepts (counted by IP).
 */
export function throttleIdentity(store: GitlabStore, headers: Record<string, string>, query: Record<string, string[]>): string | null {
  const token = tokenOf(headers, query);
  const record = token === undefined ? undefined : store.tokens.get(token);
  if (record) return `user:${record.userId}`;
  const jobToken = headers['job-token'] ?? last(query.job_token);
  const job = jobToken === undefined ? undefined : store.jobs.get(store.jobTokens.get(jobToken)?.jobId ?? -1);
  return job ? `user:${job.userId}` : null;
}

/**
 * Resolves the caller: null for anonymous; 401 for a token that matches no
 * user, on any request; then Sudo: 401 anonymous, 403 not admin, 403
 * insufficient_scope without the sudo scope, 404 for an unknown user.
 */
export function authenticate(store: GitlabStore, headers: Record<string, string>, query: Record<string, string[]>): AuthResult {
  const token = tokenOf(headers, query);
  let user: SandboxUser | null = null;
  let scopes: readonly string[] = [];
  if (token !== undefined) {
    const record = store.tokens.get(token);
    const owner = record && store.users.get(record.userId);
    if (!record || !owner || owner.state !== 'active') return { ok: false, response: UNAUTHORIZED };
    user = owner;
    scopes = record.scopes;
  }

  const sudo = last(query.sudo) ?? headers.sudo;
  if (sudo === undefined || sudo === '') return { ok: true, user };
  if (!user) return { ok: false, response: UNAUTHORIZED };
  if (!user.admin) return { ok: false, response: { status: 403, body: { message: '403 Forbidden - Must be admin to use sudo' } } };
  if (!scopes.includes('sudo')) {
    return {
      ok: false,
      response: {
        status: 403,
        body: {
          error: 'insufficient_scope',
          error_description: 'The request requires higher privileges than provided by the access token.',
          scope: 'sudo',
        },
      },
    };
  }
  const target = store.findUser(sudo.trim());
  if (!target) return { ok: false, response: { status: 404, body: { message: `404 User with ID or username '${sudo}' Not Found` } } };
  return { ok: true, user: target };
}
