/**
 * Hubzilla's date strings and the sandbox's logical clock. The real server
 * stores `YYYY-MM-DD HH:MM:SS` in UTC and uses 0001-01-01 00:00:00 as its
 * "null" date; the sandbox clock starts at a fixed instant and moves one
 * second per write, so posts made in tests get predictable timestamps too.
 */

/** The database "null" date (reference §1.3). */
export const NULL_DATE = '0001-01-01 00:00:00';
/** `encode_item()` rewrites a null `expires` to this in activity objects. */
export const ZERO_DATE = '0000-00-00 00:00:00';
/** The instant the sandbox clock starts at; all seed data lies before it. */
export const SEED_NOW = '2026-11-21 12:00:00';

/** Formats a Date as Hubzilla's `YYYY-MM-DD HH:MM:SS` (UTC). */
export function formatDate(d: Date): string {
  return d.toISOString().slice(0, 19).replace('T', ' ');
}

/** Parses a Hubzilla date string (UTC) into a Date. */
export function parseDbDate(s: string): Date {
  return new Date(`${s.replace(' ', 'T')}Z`);
}

/**
 * Lenient parse of a user-supplied date, like `datetime_convert('UTC','UTC', x)`:
 * `2030-01-01`, `2030-01-01 10:00:00`, ISO 8601. Returns null when unparseable.
 */
export function parseUserDate(s: string): Date | null {
  const t = s.trim();
  if (t === '') return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(t);
  if (m) {
    const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)));
    return Number.isNaN(d.getTime()) ? null : d;
  }
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** Adds seconds to a Hubzilla date string. */
export function addSeconds(s: string, seconds: number): string {
  return formatDate(new Date(parseDbDate(s).getTime() + seconds * 1000));
}

/** A monotonic clock: reads return the current instant, writes advance it by one second. */
export class LogicalClock {
  private current: number;

  constructor(start: string = SEED_NOW) {
    this.current = parseDbDate(start).getTime();
  }

  /** The current instant as a Hubzilla date string. */
  now(): string {
    return formatDate(new Date(this.current));
  }

  /** Advances one second and returns the new instant (one per stored record). */
  tick(): string {
    this.current += 1000;
    return this.now();
  }

  /** Moves the clock on by whole seconds, as time passing between requests (tests of time windows). */
  advance(seconds: number): void {
    this.current += Math.max(0, Math.floor(seconds)) * 1000;
  }
}
