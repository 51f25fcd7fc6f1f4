/**
 * The address a request comes from, the key of what unverified and
 * anonymous callers may spend: the peer's, or, where the peer is a proxy
 * named in TRUSTED_PROXIES, the nearest address in `X-Forwarded-For` that is
 * not one of them (the right-most hop not trusted: a client can write any
 * address at the left of the header, never at its right).
 */
import { BlockList, isIP } from 'node:net';
import { proxyRange } from '../config.js';

/** `::ffff:127.0.0.1` and `127.0.0.1` are one client. */
function plain(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

export type ClientAddress = (peer: string | undefined, forwardedFor: string | readonly string[] | undefined | null) => string;

export function clientAddress(trustedProxies: readonly string[]): ClientAddress {
  if (trustedProxies.length === 0) return (peer) => plain(peer ?? 'unknown');
  const trusted = new BlockList();
  for (const entry of trustedProxies) {
    const range = proxyRange(entry);
    if (range) trusted.addSubnet(range.address, range.prefix, range.family);
  }
  const isTrusted = (address: string) => {
    const family = isIP(address);
    return family !== 0 && trusted.check(address, family === 4 ? 'ipv4' : 'ipv6');
  };
  return (peer, forwardedFor) => {
    let address = plain(peer ?? 'unknown');
    if (!isTrusted(address) || !forwardedFor) return address;
    const hops = (typeof forwardedFor === 'string' ? forwardedFor : forwardedFor.join(','))
      .split(',')
      .map((hop) => plain(hop.trim()))
      .filter((hop) => isIP(hop) !== 0);
    for (let i = hops.length - 1; i >= 0; i--) {
      address = hops[i] as string;
      if (!isTrusted(address)) break;
    }
    return address;
  };
}
