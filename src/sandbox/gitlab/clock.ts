/**
 * The sandbox clock. Everything that moves on its own in GitLab (jobs
 * pending -> running -> done, forks and pull mirrors scheduled -> started ->
 * finished) moves on this clock, one step every STEP_MS of sandbox time.
 *
 * - 'real' (default): sandbox time is wall time; an unref'd timer looks for
 *   due transitions a few times a second, so the demo's pipelines advance by
 *   themselves.
 * - 'manual': sandbox time starts at MANUAL_CLOCK_START and stands still
 *   until `advance(ms)`; tests control every transition.
 *
 * `advance(ms)` works in both modes (it shifts sandbox time forward).
 */

/** Sandbox time one automatic transition takes. */
export const STEP_MS = 3_000;
/** Where a manual clock starts: after every seeded timestamp, fixed so tests can pin times. */
export const MANUAL_CLOCK_START = Date.parse('2024-04-01T12:00:00.000Z');
const REAL_TICK_MS = 250;

export type ClockMode = 'real' | 'manual';

export class SandboxClock {
  private offset = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly base: () => number;

  /** `onTime` runs whenever sandbox time may have passed a due transition. */
  constructor(
    readonly mode: ClockMode,
    private readonly onTime: (now: number) => void,
  ) {
    this.base = mode === 'real' ? Date.now : () => MANUAL_CLOCK_START;
  }

  /** Sandbox time in epoch milliseconds. */
  now(): number {
    return this.base() + this.offset;
  }

  /** Moves sandbox time forward by `ms` and applies every transition that became due, in time order. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`advance(ms) needs a non-negative number, got ${ms}`);
    this.offset += ms;
    this.onTime(this.now());
  }

  /** Starts the real-time timer; a no-op for a manual clock. */
  start(): void {
    if (this.mode !== 'real' || this.timer) return;
    this.timer = setInterval(() => this.onTime(this.now()), REAL_TICK_MS);
    // Never keep a process alive just for the demo's moving pipelines.
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
