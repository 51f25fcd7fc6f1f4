/**
 * Whom GitLab counts a call against, as its rate limits do
 * (Gitlab::RackAttack::Request through Gitlab::Auth::RequestAuthenticator):
 * the user a token belongs to, whatever header carried it (`Private-Token`,
 * `Authorization: Bearer`, any spelling; Sudo aside, since Rack::Attack counts
 * the token's own user), the job's user for a CI job token, and the
 * gateway's own address for anonymous calls and for any token GitLab does
 * not accept: it counts those as unauthenticated, by IP.
 *
 * The gateway learns it by asking once per credential (`GET /user`; `GET
 * /job` for a job token alone), remembers it by a digest for
 * IDENTITY_TTL_MS, and a refusal (401) for REFUSED_MS, during which the
 * credential costs no call at all. Lookups of one credential in flight at
 * once are one lookup.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/** The budget key of anonymous calls and of credentials GitLab has not accepted: the gateway's address, one for all. */
export const ANONYMOUS = 'anonymous';
/** How long a credential's user is remembered: a token revoked meanwhile is learnt from its first 401. */
export const IDENTITY_TTL_MS = 5 * 60_000;
/** How long a credential GitLab refused (401) is refused without asking again. */
export const REFUSED_MS = 30_000;
/** Credentials remembered at most, each way (a digest and a number each). */
const MAX_REMEMBERED = 100_000;

export type Credentials = Readonly<Record<string, string>>;

/** What a lookup learnt: GitLab's status, and the user it named on a 200. */
export interface LookupResult {
  status: number;
  userId: number | null;
}

/** The route that names a credential's user: `/job` for a CI job token alone (it has no `/user`), else `/user`. */
export function lookupPath(credentials: Credentials): readonly ['user'] | readonly ['job'] {
  return credentials.authorization || credentials['private-token'] ? ['user'] : ['job'];
}

/** The user id in a lookup's answer: `/user`'s `id`, `/job`'s `user.id`. */
export function lookupUserId(path: readonly string[], body: unknown): number | null {
  const record = path[0] === 'job' ? (body as { user?: { id?: unknown } } | null)?.user : (body as { id?: unknown } | null);
  const id = record?.id;
  return typeof id === 'number' && Number.isSafeInteger(id) ? id : null;
}

/** Whether any credential GitLab counts per user is present (Sudo alone is not one). */
export function hasToken(credentials: Credentials | undefined): credentials is Credentials {
  return (
    credentials !== undefined &&
    (credentials.authorization !== undefined || credentials['private-token'] !== undefined || credentials['job-token'] !== undefined)
  );
}

export class GitlabIdentities {
  private readonly users = new LRUCache<string, { key: string; until: number }>({ max: MAX_REMEMBERED });
  private readonly refusals = new LRUCache<string, number>({ max: MAX_REMEMBERED });
  private readonly lookups = new Map<string, Promise<string | null>>();
  /** Digests by credentials object: a request's calls share one object, so most calls digest nothing. */
  private readonly digests = new WeakMap<Credentials, string>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The key of credentials already known: ANONYMOUS, `user:<id>`, `token:<digest>`; `refused` while a 401 is remembered; null when not yet asked. */
  known(credentials: Credentials | undefined): string | null {
    if (!hasToken(credentials)) return ANONYMOUS;
    const digest = this.digest(credentials);
    const now = this.now();
    const refusedUntil = this.refusals.get(digest);
    if (refusedUntil !== undefined && refusedUntil > now) return 'refused';
    const user = this.users.get(digest);
    return user !== undefined && user.until > now ? user.key : null;
  }

  /** Milliseconds a refused credential stays refused; 0 when it is not. */
  refusedFor(credentials: Credentials | undefined): number {
    if (!hasToken(credentials) || this.refusals.size === 0) return 0;
    const until = this.refusals.get(this.digest(credentials));
    return until === undefined ? 0 : Math.max(0, until - this.now());
  }

  /**
   * The key of `credentials`, asking GitLab with `lookup` when not known
   * (one lookup per credential in flight). Null: GitLab refused them. A
   * lookup that fails otherwise (GitLab away) answers ANONYMOUS for now and
   * is asked again next time.
   */
  async keyOf(credentials: Credentials | undefined, lookup: () => Promise<LookupResult>): Promise<string | null> {
    const known = this.known(credentials);
    if (known === 'refused') return null;
    if (known !== null || !hasToken(credentials)) return known ?? ANONYMOUS;
    const digest = this.digest(credentials);
    let pending = this.lookups.get(digest);
    if (!pending) {
      pending = this.learn(digest, lookup).finally(() => this.lookups.delete(digest));
      this.lookups.set(digest, pending);
    }
    return pending;
  }

  /** GitLab answered a call of these credentials with 401: they are refused for REFUSED_MS (anonymous calls never are). */
  refused(credentials: Credentials | undefined): void {
    if (!hasToken(credentials)) return;
    const digest = this.digest(credentials);
    this.users.delete(digest);
    this.refusals.set(digest, this.now() + REFUSED_MS);
  }

  private async learn(digest: string, lookup: () => Promise<LookupResult>): Promise<string | null> {
    let result: LookupResult;
    try {
      result = await lookup();
    } catch {
      return ANONYMOUS;
    }
    if (result.status === 401) {
      this.refusals.set(digest, this.now() + REFUSED_MS);
      return null;
    }
    // A token GitLab accepts but that may not read its user (a scope without read_user): counted apart, by its digest.
    const key = result.status === 200 && result.userId !== null ? `user:${result.userId}` : result.status < 500 ? `token:${digest}` : null;
    if (key === null) return ANONYMOUS;
    this.users.set(digest, { key, until: this.now() + IDENTITY_TTL_MS });
    return key;
  }

  private digest(credentials: Credentials): string {
    let digest = this.digests.get(credentials);
    if (digest === undefined) {
      const entries = Object.entries(credentials)
        .filter(([name]) => name !== 'sudo')
        .map(([name, value]) => `${name}=${value}`)
        .sort();
      digest = createHash('sha256').update(entries.join('\n')).digest('base64url').slice(0, 32);
      this.digests.set(credentials, digest);
    }
    return digest;
  }
}
