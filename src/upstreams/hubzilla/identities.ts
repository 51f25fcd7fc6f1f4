/**
 * The Hubzilla credential scope: the channel the hub verified a login as.
 * One channel can be logged into by its nickname or its account's email, by
 * password or OAuth2 token: what is remembered for a channel (file creators,
 * stored answers) is kept for that channel, so each login of it shares it,
 * and never for a credential string the hub did not verify. Learned from
 * `verify` (the channel's hash), keyed by a digest of the credential and the
 * channel asked for: no credential is kept here. One table per Hubzilla
 * upstream (its HTTP client), so gateways in one process (tests) never share.
 *
 * A login shares the channel's stored answers only while the hub accepted it
 * lately (PROOF_MS): a token revoked on the hub, or a changed password, would
 * otherwise read what the channel's other logins keep warm. Past that, the
 * next call verifies the login again first (one `verify`), and a 401 forgets
 * the login at once.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/** How long a verified login counts as its channel (file creators) without asking again. */
const IDENTITY_TTL_MS = 5 * 60_000;
/** How long a login may be served the channel's stored answers after the hub last accepted it: what a revoked login can still read. */
export const PROOF_MS = 10_000;

interface Login {
  channelHash: string;
  /** When `verify` last succeeded for this login, on the upstream's clock. */
  provenAt: number;
}

interface Table {
  logins: LRUCache<string, Login>;
  /** Verifications in flight, so that the calls of one request verify a stale login once. */
  proving: Map<string, Promise<unknown>>;
}

const tables = new WeakMap<object, Table>();

function tableOf(upstream: object): Table {
  let table = tables.get(upstream);
  if (!table) {
    table = { logins: new LRUCache<string, Login>({ max: 10_000, ttl: IDENTITY_TTL_MS }), proving: new Map() };
    tables.set(upstream, table);
  }
  return table;
}

function credentialKey(authorization: string): string {
  return createHash('sha256').update(authorization).digest('base64url');
}

function loginKey(authorization: string, channel: string | null): string {
  return `${credentialKey(authorization)} ${channel?.toLowerCase() ?? ''}`;
}

/** The channel hash the hub verified this login (and `channel=`) as, when it did lately. */
export function verifiedChannel(upstream: object, authorization: string, channel: string | null): string | undefined {
  return tables.get(upstream)?.logins.get(loginKey(authorization, channel))?.channelHash;
}

/** Whether this login was verified before but not within PROOF_MS: its next call verifies it again first. */
export function needsProof(upstream: object, authorization: string, channel: string | null, now: number): boolean {
  const login = tables.get(upstream)?.logins.get(loginKey(authorization, channel));
  return login !== undefined && now - login.provenAt > PROOF_MS;
}

/** Until when (on the upstream's clock) this login may share its channel's stored answers without another `verify`. */
export function provenUntil(upstream: object, authorization: string, channel: string | null): number {
  const login = tables.get(upstream)?.logins.get(loginKey(authorization, channel));
  return login === undefined ? Number.NEGATIVE_INFINITY : login.provenAt + PROOF_MS;
}

/** Runs `verify` once for all the calls that find this login stale at the same time. */
export function proveOnce(upstream: object, authorization: string, channel: string | null, verify: () => Promise<unknown>): Promise<unknown> {
  const { proving } = tableOf(upstream);
  const key = loginKey(authorization, channel);
  let pending = proving.get(key);
  if (!pending) {
    pending = verify().finally(() => proving.delete(key));
    proving.set(key, pending);
  }
  return pending;
}

/** Records what `verify` answered for this login and `channel=`, now. */
export function rememberVerifiedChannel(upstream: object, authorization: string, channel: string | null, channelHash: string, now: number): void {
  if (channelHash !== '') tableOf(upstream).logins.set(loginKey(authorization, channel), { channelHash, provenAt: now });
}

/** The hub refused this credential (401): none of its logins, whatever channel they ask for, shares anything from now on. */
export function forgetLogin(upstream: object, authorization: string): void {
  const logins = tables.get(upstream)?.logins;
  if (!logins) return;
  const prefix = `${credentialKey(authorization)} `;
  // Walked on a 401 only; the table holds at most 10,000 logins.
  for (const key of [...logins.keys()]) if (key.startsWith(prefix)) logins.delete(key);
}
