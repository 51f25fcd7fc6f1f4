/**
 * Counts the HTTP requests in flight, so a shutdown can wait for them (up to
 * SHUTDOWN_TIMEOUT_MS) after it stopped accepting connections and before it
 * cuts the ones left.
 */
import type { ServerResponse } from 'node:http';

export class InFlightRequests {
  private count = 0;
  private waiters: (() => void)[] = [];

  get size(): number {
    return this.count;
  }

  /** Counts `res` until it is finished or its connection closes. */
  track(res: ServerResponse): void {
    this.count++;
    res.once('close', () => {
      this.count--;
      if (this.count === 0) for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /** Resolves true once no request is in flight, false when `timeoutMs` passes first. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== wake);
        resolve(false);
      }, timeoutMs);
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.waiters.push(wake);
    });
  }
}
