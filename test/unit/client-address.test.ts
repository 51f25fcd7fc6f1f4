/**
 * The client address (src/server/client-address.ts): the peer, unless the
 * peer is a trusted proxy; then the right-most X-Forwarded-For hop that is
 * not one, since a client can write anything at the header's left.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { clientAddress } from '../../src/server/client-address.js';

describe('clientAddress', () => {
  it('is the peer when no proxy is trusted, whatever X-Forwarded-For claims', () => {
    const of = clientAddress([]);
    expect(of('::ffff:192.0.2.1', '203.0.113.9')).toBe('192.0.2.1');
    expect(of(undefined, null)).toBe('unknown');
  });

  it('takes the right-most hop that is not a trusted proxy, from a trusted peer only', () => {
    const of = clientAddress(['127.0.0.1', '10.0.0.0/8', '::1']);
    expect(of('127.0.0.1', '203.0.113.9')).toBe('203.0.113.9');
    // A client that writes its own X-Forwarded-For gets its real address read, not the one it wrote.
    expect(of('127.0.0.1', '1.2.3.4, 203.0.113.9, 10.1.2.3')).toBe('203.0.113.9');
    expect(of('::1', ['198.51.100.4', '10.0.0.2'])).toBe('198.51.100.4');
    // From a peer that is not trusted, the header is the client's word only.
    expect(of('192.0.2.77', '203.0.113.9')).toBe('192.0.2.77');
    // Nothing but proxies: the left-most of them.
    expect(of('127.0.0.1', '10.0.0.5, garbage')).toBe('10.0.0.5');
  });

  it('refuses a TRUSTED_PROXIES entry that is no address or range', () => {
    expect(loadConfig({ TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8, ::1' }, []).trustedProxies).toEqual(['127.0.0.1', '10.0.0.0/8', '::1']);
    expect(() => loadConfig({ TRUSTED_PROXIES: 'proxy.example' }, [])).toThrow(/TRUSTED_PROXIES takes IP addresses and CIDR ranges, got "proxy.example"/);
    expect(() => loadConfig({ TRUSTED_PROXIES: '10.0.0.0/33' }, [])).toThrow(/TRUSTED_PROXIES/);
  });
});
