import { describe, expect, it } from 'vitest';
import { aclList, date, normaliseItem } from '../../src/upstreams/hubzilla/normalise.js';

describe('date', () => {
  it('turns a Hubzilla UTC timestamp into ISO 8601', () => {
    expect(date('2024-03-01 12:34:56')).toBe('2024-03-01T12:34:56.000Z');
    expect(date('2024-03-01T12:34:56Z')).toBe('2024-03-01T12:34:56.000Z');
    expect(date('2024-02-29 00:00:00+00:00')).toBe('2024-02-29T00:00:00.000Z');
  });

  it('answers null for the zero dates and for what is not a timestamp', () => {
    expect(date('0000-00-00 00:00:00')).toBeNull();
    expect(date('0001-01-01 00:00:00')).toBeNull();
    expect(date('yesterday')).toBeNull();
    expect(date(1700000000)).toBeNull();
  });

  it('rolls an out-of-range day or hour over as Date does, rather than echo it', () => {
    expect(date('2023-02-29 00:00:00')).toBe('2023-03-01T00:00:00.000Z');
    expect(date('2024-04-31 10:00:00')).toBe('2024-05-01T10:00:00.000Z');
    expect(date('2024-01-01 24:00:00')).toBe('2024-01-02T00:00:00.000Z');
    expect(date('2024-13-01 00:00:00')).toBeNull();
  });
});

describe('aclList', () => {
  it('reads the hashes of an ACL string', () => {
    expect(aclList('<abc><def>')).toEqual(['abc', 'def']);
    expect(aclList('')).toEqual([]);
    expect(aclList(null)).toEqual([]);
  });

  it('skips empty and unclosed entries as the pattern <([^<>]*)> does', () => {
    expect(aclList('<><a>')).toEqual(['a']);
    expect(aclList('<a<b>')).toEqual(['b']);
    expect(aclList('x<a>y<b')).toEqual(['a']);
    expect(aclList('>a<b>>')).toEqual(['b']);
  });

  it('keeps an array as its non-empty strings', () => {
    expect(aclList(['a', '', 'b'])).toEqual(['a', 'b']);
  });
});

describe('signature', () => {
  it('keeps what the hub sends: empty for an item it did not sign, null only where the encoding has none', () => {
    expect(normaliseItem({ signature: '' }).signature).toBe('');
    expect(normaliseItem({ signature: 'sha256.abc' }).signature).toBe('sha256.abc');
    expect(normaliseItem({ sig: '' }).signature).toBe('');
    expect(normaliseItem({}).signature).toBeNull();
  });
});
