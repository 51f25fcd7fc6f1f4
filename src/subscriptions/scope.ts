/**
 * Credential scopes: a stable, one-way name for "the same credentials", so
 * shared pollers and their topics can be keyed by who asks without keeping
 * or publishing a token. SHA-256 is deterministic across gateway instances
 * (they must agree on topic names) and tokens are high-entropy secrets, so
 * the digest does not give them away.
 */
import { createHash } from 'node:crypto';

/** Header names and values as forwarded upstream. */
export type Credentials = Readonly<Record<string, string>>;

/** 32 hex characters naming the credential set; the same for any key order. */
export function credentialScope(credentials: Credentials): string {
  const entries = Object.entries(credentials)
    .map(([name, value]) => [name.toLowerCase(), value] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update(JSON.stringify(entries)).digest('hex').slice(0, 32);
}

/** True when no credential that identifies a user is present (GitLab then answers with public data only). */
export function isAnonymous(credentials: Credentials): boolean {
  return !credentials.authorization && !credentials['private-token'] && !credentials['job-token'];
}
