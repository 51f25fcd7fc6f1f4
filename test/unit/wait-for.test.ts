/**
 * test/setup.ts: vi.waitFor waits past vitest's one-second default for a
 * condition that holds later, and keeps a timeout a test names itself.
 */
import { describe, expect, it, vi } from 'vitest';

describe('vi.waitFor in this suite', () => {
  it('waits past one second for a condition that holds later', async () => {
    const start = performance.now();
    // Vitest's default (one second) would give up before this holds.
    await vi.waitFor(() => expect(performance.now() - start).toBeGreaterThanOrEqual(1_200));
  });

  it('keeps a timeout the test names', async () => {
    await expect(vi.waitFor(() => expect(false).toBe(true), { timeout: 50, interval: 10 })).rejects.toThrow();
  });
});
