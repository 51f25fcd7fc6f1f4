/**
 * The Hubzilla credential scope: the channel the hub verified a login as.
 * One channel can be logged into by its nickname or its account's email, by
 * password or OAuth2 token: what is remembered for a channel (file creators,
 * stored answers) is kept for that channel, so each login of it shares it,
 * and never for a credential string the hub did not verify. Learned from
 * `verify` (the channel's hash), for a few minutes, keyed by a digest of the
 * credential and the channel asked for: no credential is kept here. One
 * table per Hubzilla upstream (its HTTP client), so gateways in one process
 * (tests) never share.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/** How long a verified login counts as its channel without asking again: a changed password stops sharing within this. */
const IDENTITY_TTL_MS = 5 * 60_000;

const tables = new WeakMap<object, LRUCache<string, string>>();

function tableOf(upstream: object): LRUCache<string, string> {
  let table = tables.get(upstream);
  if (!table) {
    table = new LRUCache<string, string>({ max: 10_000, ttl: IDENTITY_TTL_MS });
    tables.set(upstream, table);
  }
  return table;
}

function loginKey(authorization: string, channel: string | null): string {
  return createHash('sha256')
    .update(authorization)
    .update('\n')
    .update(channel?.toLowerCase() ?? '')
    .digest('base64url');
}

/** The channel hash the hub verified this login (and `channel=`) as, when it did lately. */
export function verifiedChannel(upstream: object, authorization: string, channel: string | null): string | undefined {
  return tables.get(upstream)?.get(loginKey(authorization, channel));
}

/** Records what `verify` answered for this login and `channel=`. */
export function rememberVerifiedChannel(upstream: object, authorization: string, channel: string | null, channelHash: string): void {
  if (channelHash !== '') tableOf(upstream).set(loginKey(authorization, channel), channelHash);
}
