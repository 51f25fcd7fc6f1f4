/**
 * Runs before every test file (vitest.config.ts, setupFiles).
 *
 * `vi.waitFor` gives up after one second unless told otherwise: on a busy
 * machine (three suites on two cores) a condition that is on its way can
 * take longer, and the test would fail on the machine's speed, not on the
 * code. Here a wait ends when its condition holds, bounded by 15 s (just
 * under the tests' own 20 s, so what never holds still fails with its
 * assertion); a wait that names its own timeout keeps it.
 */
import { vi } from 'vitest';

const waitFor = vi.waitFor.bind(vi);
// Below the tests' 20 s timeout, so a condition that never holds fails with its own assertion, not a bare timeout.
const UNTIL_THE_TEST_TIMES_OUT = { timeout: 15_000, interval: 20 };
vi.waitFor = ((callback: Parameters<typeof waitFor>[0], options?: Parameters<typeof waitFor>[1]) =>
  waitFor(callback, typeof options === 'number' ? options : { ...UNTIL_THE_TEST_TIMES_OUT, ...options })) as typeof vi.waitFor;
