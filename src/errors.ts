/**
 * The closed set of error codes a caller can see in `extensions.code`, and the
 * plain Error classes that carry them up to the GraphQL layer. Nothing here
 * knows GraphQL: the server turns these into public errors in one place.
 */

export type ErrorCode =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'BAD_USER_INPUT'
  | 'UPSTREAM_ERROR'
  | 'UPSTREAM_TIMEOUT'
  | 'UPSTREAM_UNAVAILABLE'
  | 'UPSTREAM_RATE_LIMITED'
  /** The caller's own allowance of upstream calls (INBOUND_CALLS_PER_MINUTE) has less left than the operation would cost: 429, with `retryAfterSeconds`. */
  | 'RATE_LIMITED';

/** Where a failing upstream call went; never holds a credential or a query string. */
export interface UpstreamInfo {
  name: string;
  status: number | null;
  method: string;
  path: string;
  /** Seconds the upstream asked callers to wait (Retry-After of a 429 or 503), when it said. */
  retryAfterSeconds?: number;
}

/** A failure reported by (or on the way to) an upstream REST API. */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  /** Set when the call never went out because the upstream's circuit breaker is open. */
  fastFail = false;
  /** Set when the caller hung up and the call was abandoned: nothing the upstream did, nothing to report. */
  cancelled = false;
  /** Set when the answer's head came and its body broke off: a GET gets one more try. */
  cutShort = false;
  /** Set on a write that was sent but got no answer (it timed out, or the connection dropped): the upstream may have applied it. */
  mayHaveBeenApplied = false;
  /** What a retry of such a write sends again to be safe (the messageId of a Hubzilla post); null when nothing makes it safe. */
  retryWith: Readonly<Record<string, string>> | null = null;
  constructor(
    message: string,
    readonly code: ErrorCode,
    readonly upstream: UpstreamInfo,
    /** The parsed upstream error body, for clients that refine the mapping (400 maps, 409). */
    readonly body: unknown = null,
  ) {
    super(message);
  }
}

/** A request the caller got wrong before any upstream was asked. */
export class InputError extends Error {
  override readonly name = 'InputError';
  readonly code: ErrorCode = 'BAD_USER_INPUT';
  constructor(
    message: string,
    /** The argument path that is wrong, e.g. ['first']. */
    readonly field: string[] = [],
  ) {
    super(message);
  }
}
