/** The primary's lease table for its workers' pollers: one holder per key until it expires, releases, or dies. */
import { describe, expect, it } from 'vitest';
import { LeaseTable } from '../../src/subscriptions/ipc-bus.js';

describe('LeaseTable', () => {
  it('gives a key to one worker at a time, renews it for its holder, and hands it over once it expires', () => {
    const table = new LeaseTable();
    expect(table.hold('jobs:7:abc', 1, 1_000, 0)).toBe(true);
    expect(table.hold('jobs:7:abc', 2, 1_000, 500)).toBe(false);
    expect(table.hold('jobs:7:abc', 1, 1_000, 900)).toBe(true);
    expect(table.hold('jobs:7:abc', 2, 1_000, 1_800)).toBe(false);
    expect(table.hold('jobs:7:abc', 2, 1_000, 1_901)).toBe(true);
    expect(table.hold('jobs:8:abc', 1, 1_000, 1_901)).toBe(true);
  });

  it('frees a key at once when its holder releases it or dies', () => {
    const table = new LeaseTable();
    table.hold('a', 1, 60_000, 0);
    table.hold('b', 1, 60_000, 0);
    table.release('a', 2);
    expect(table.hold('a', 2, 60_000, 1)).toBe(false);
    table.release('a', 1);
    expect(table.hold('a', 2, 60_000, 1)).toBe(true);
    table.releaseAll(1);
    expect(table.hold('b', 3, 60_000, 2)).toBe(true);
  });
});
