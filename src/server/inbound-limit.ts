/**
 * An allowance of upstream calls per caller and minute
 * (INBOUND_CALLS_PER_MINUTE; off by default), counted in Redis with
 * REDIS_URL so a fleet counts once.
 *
 * - The caller is whom the upstreams verified: a GitLab user (whatever
 *   token or header), else a Hubzilla channel the hub verified the login as,
 *   else the client's address (client-address.ts), so invented credentials
 *   share their address's allowance instead of getting one each.
 * - Reserve, then spend: an operation reserves its estimate (the cost
 *   limit's) at once, atomically, before it runs, and is refused when that
 *   would pass the allowance: over HTTP with 429 and `Retry-After`, over
 *   graphql-ws and SSE with the code RATE_LIMITED and `retryAfterSeconds`.
 *   Calls past the estimate are charged as they are sent; what the
 *   operation did not spend is given back when it ends (answers from the
 *   cache and reads joined in flight are free).
 * - A subscription reserves likewise; the calls it causes later, its first
 *   read and its polls, are charged to its caller as they are sent, and the
 *   reservation is given back once its first event is out.
 */
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import type { Context } from '../schema/context.js';
import type { RequestScope } from '../request-scope.js';
import type { MinuteCounter } from '../upstreams/minute-counter.js';
import { costOf } from './limits.js';

/** Whom an operation's calls are counted against: its caller's key (see above). */
export type InboundKeyOf = (context: Context) => Promise<string>;

interface Reservation {
  key: string;
  /** Points reserved in `window`. */
  points: number;
  window: number;
}

export class InboundAllowance {
  /** Callers of background reads (a subscription's polls), by the credentials object their topic holds. */
  private readonly keysByCredentials = new WeakMap<object, string>();
  /** What each operation reserved, by its scope. */
  private readonly reservations = new WeakMap<RequestScope, Reservation>();

  constructor(
    readonly perMinute: number,
    private readonly counter: MinuteCounter,
    private readonly keyOf: InboundKeyOf,
  ) {}

  /** The caller background reads with these credentials are charged to, once one of its subscriptions was admitted. */
  keyOfCredentials(credentials: object | undefined): string | undefined {
    return credentials ? this.keysByCredentials.get(credentials) : undefined;
  }

  /** One upstream call was sent: for an operation, counted against what it reserved; else charged to `key` at once. */
  charge(scope: RequestScope | undefined, key: string | undefined): void {
    if (scope?.inboundKey) {
      scope.inboundSpent = (scope.inboundSpent ?? 0) + 1;
      const reserved = this.reservations.get(scope)?.points ?? 0;
      if (scope.inboundSpent > reserved) void this.counter.add(scope.inboundKey);
    } else if (key) {
      void this.counter.add(key);
    }
  }

  /** Reserves an operation's estimate for its caller; the refusal to answer with when the allowance cannot hold it. */
  private async reserve(context: Context): Promise<{ errors: ReturnType<typeof createGraphQLError>[] } | null> {
    const scope = context.scope;
    const key = await this.keyOf(context);
    scope.inboundKey = key;
    scope.inboundSpent = 0;
    this.keysByCredentials.set(context.live.credentials, key);
    const cost = costOf(context) ?? 1;
    const { used, leftMs, window } = await this.counter.add(key, cost);
    if (used <= this.perMinute) {
      this.reservations.set(scope, { key, points: cost, window });
      return null;
    }
    await this.counter.giveBack(key, cost, window);
    const left = Math.max(0, this.perMinute - (used - cost));
    const seconds = Math.ceil(leftMs / 1000);
    return {
      errors: [
        createGraphQLError(
          `This caller may cause ${this.perMinute} upstream calls a minute and has ${left} left; the operation is estimated at ${cost}. Try again in ${seconds} s.`,
          { extensions: { code: 'RATE_LIMITED', retryAfterSeconds: seconds, http: { status: 429, headers: { 'retry-after': String(seconds) } } } },
        ),
      ],
    };
  }

  /** Gives back what an operation reserved and did not spend. */
  private settle(scope: RequestScope): void {
    const reservation = this.reservations.get(scope);
    if (!reservation) return;
    this.reservations.delete(scope);
    const unspent = reservation.points - Math.min(reservation.points, scope.inboundSpent ?? 0);
    // A later call of the operation (a subscription's poll) is charged as it is sent.
    scope.inboundSpent = Number.POSITIVE_INFINITY;
    if (unspent > 0) void this.counter.giveBack(reservation.key, unspent, reservation.window);
  }

  /** Reserves before an operation runs and settles when it ends (a subscription: once its first event is out, or it ends). */
  plugin(): Plugin {
    // The operation's context once its reservation holds; null when it was refused (and answered with the refusal).
    const admit = async (contextValue: unknown, refuse: (result: { errors: ReturnType<typeof createGraphQLError>[] }) => void) => {
      const context = contextValue as unknown as Context;
      const refusal = await this.reserve(context);
      if (refusal) refuse(refusal);
      return refusal ? null : context;
    };
    // A single result settles at once; a stream when it ends, and a subscription's already with its first event.
    const settleWith = (scope: RequestScope, onFirst: boolean) => (result: object) => {
      if (!(Symbol.asyncIterator in result)) {
        this.settle(scope);
        return;
      }
      return { onNext: onFirst ? () => this.settle(scope) : undefined, onEnd: () => this.settle(scope) };
    };
    return {
      onExecute: async ({ args, setResultAndStopExecution }) => {
        const context = await admit(args.contextValue, setResultAndStopExecution);
        if (context) return { onExecuteDone: ({ result }) => settleWith(context.scope, false)(result) };
      },
      onSubscribe: async ({ args, setResultAndStopExecution }) => {
        const context = await admit(args.contextValue, setResultAndStopExecution);
        if (context) return { onSubscribeResult: ({ result }) => settleWith(context.scope, true)(result) };
      },
    };
  }
}
