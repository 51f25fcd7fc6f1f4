/**
 * The in-memory answer store (upstreams/cache-store.ts): bounded in bytes,
 * least recently used out first, a body several scopes read alike held and
 * counted once, and parsed once for every reader.
 */
import { describe, expect, it } from 'vitest';
import { bodyDigest, type CacheEntry, MemoryStore } from '../../src/upstreams/cache-store.js';

const entry = (body: string): CacheEntry => ({
  status: 200,
  headers: { etag: 'W/"x"' },
  body,
  storedAt: 0,
  tags: ['gitlab:project:7'],
  origin: 'test',
  seq: 1,
});

describe('MemoryStore', () => {
  it('parses a body once for every key and reader of it, frozen, and counts its parsed form', async () => {
    const store = new MemoryStore(1_000_000);
    const page = JSON.stringify(Array.from({ length: 100 }, (_, id) => ({ id, name: `job ${id}`, tags: ['a'] })));
    await store.set('alice', entry(page), 60_000);
    await store.set('bob', entry(page), 60_000);
    const before = store.bytes();
    let parses = 0;
    const parse = () => {
      parses++;
      return JSON.parse(page) as { id: number; tags: string[] }[];
    };
    const first = (await store.get('alice'))?.parsed?.get(parse);
    const second = (await store.get('bob'))?.parsed?.get(parse);
    expect(parses).toBe(1);
    expect(second).toBe(first);
    expect(first?.[99]?.id).toBe(99);
    // Shared by every scope: nobody may change it.
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first?.[0]?.tags)).toBe(true);
    expect(() => first?.[0]?.tags.push('b')).toThrow(TypeError);
    // Counted once made: about twice the text, for the objects V8 holds.
    expect(store.bytes() - before).toBe(page.length * 2);
  });

  it('makes room for a parsed form like for a new entry; an entry names its body by its digest', async () => {
    const page = JSON.stringify(Array.from({ length: 100 }, (_, id) => ({ id })));
    const store = new MemoryStore(Math.ceil(page.length * 4.5));
    for (const [key, text] of [
      ['one', page],
      ['two', `${page} `],
      ['three', `${page}  `],
    ] as const)
      await store.set(key, entry(text), 60_000);
    expect(await store.get('one')).not.toBeNull();
    (await store.get('three'))?.parsed?.get(() => JSON.parse(page));
    // Three texts and one parsed form do not fit: the least recently used entry goes.
    expect(store.bytes()).toBeLessThanOrEqual(page.length * 4.5);
    expect(await store.get('two')).toBeNull();
    const kept = await store.get('three');
    expect(kept?.body).toBe(`${page}  `);
    // The body's digest, which warm answers compare: taken from the body, and the same for the same text.
    expect(kept?.digest).toBe(bodyDigest(`${page}  `));
    expect(kept?.digest).not.toBe(bodyDigest(page));
  });

  it('holds a body that several keys store once, and lets it go with its last key', async () => {
    let evicted = 0;
    const store = new MemoryStore(1_000_000, () => evicted++);
    const page = JSON.stringify(Array.from({ length: 200 }, (_, id) => ({ id, name: `job ${id}` })));
    await store.set('alice', entry(page), 60_000);
    const one = store.bytes();
    await store.set('bob', entry(page), 60_000);
    // The second key adds its headers and tags, not the body again.
    expect(store.bytes() - one).toBeLessThan(500);
    expect((await store.get('bob'))?.body).toBe(page);
    expect(evicted).toBe(0);
  });

  it('counts two bytes a character only for text outside Latin-1', async () => {
    const latin = new MemoryStore(1_000_000);
    await latin.set('k', entry('é'.repeat(10_000)), 60_000);
    const wide = new MemoryStore(1_000_000);
    await wide.set('k', entry('😀'.repeat(5_000)), 60_000);
    expect(latin.bytes()).toBeGreaterThanOrEqual(10_000);
    expect(latin.bytes()).toBeLessThan(11_000);
    expect(wide.bytes()).toBeGreaterThanOrEqual(20_000);
  });

  it('never holds more than its bound: the least recently used go first, a body over a quarter of it is not kept', async () => {
    let evicted = 0;
    const store = new MemoryStore(20_000, () => evicted++);
    for (let i = 0; i < 10; i++) await store.set(`k${i}`, entry(`${i}`.repeat(3_000)), 60_000);
    expect(store.bytes()).toBeLessThanOrEqual(20_000);
    expect(evicted).toBeGreaterThan(0);
    expect(await store.get('k0')).toBeNull();
    expect(await store.get('k9')).not.toBeNull();
    await store.set('huge', entry('x'.repeat(6_000)), 60_000);
    expect(await store.get('huge')).toBeNull();
  });

  it('lets an entry expire by the clock it is given', async () => {
    let now = 1_000;
    const store = new MemoryStore(
      1_000_000,
      () => {},
      () => now,
    );
    await store.set('k', entry('{}'), 5_000);
    now += 4_999;
    expect(await store.get('k')).not.toBeNull();
    now += 2;
    expect(await store.get('k')).toBeNull();
    expect(store.bytes()).toBe(0);
  });
});
