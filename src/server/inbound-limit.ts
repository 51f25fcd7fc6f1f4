/**
 * An allowance of upstream calls per caller and minute
 * (INBOUND_CALLS_PER_MINUTE; off by default), counted in Redis with
 * REDIS_URL so a fleet counts once. What a caller is charged is the calls
 * its operations actually sent (answers from the cache and reads joined in
 * flight are free). An operation whose estimate (the cost limit's) exceeds
 * what is left this minute is refused before it runs: over HTTP with 429
 * and `Retry-After`, over graphql-ws and SSE with the code RATE_LIMITED and
 * `retryAfterSeconds`. The caller is its credential scope: the GitLab
 * credential headers and the Hubzilla one, as a digest; callers without
 * any share one allowance.
 */
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import type { RequestScope } from '../request-scope.js';
import type { MinuteCounter } from '../upstreams/minute-counter.js';
import { credentialDigest } from '../upstreams/rate-gate.js';
import { costOf } from './limits.js';

/** The caller's key: its GitLab credential headers and its Hubzilla credential, digested. */
export function inboundKey(gitlabCredentials: Readonly<Record<string, string>>, hubzillaCredential: string | null): string {
  return credentialDigest('inbound', hubzillaCredential ? { ...gitlabCredentials, 'x-hubzilla-authorization': hubzillaCredential } : gitlabCredentials);
}

export class InboundAllowance {
  constructor(
    readonly perMinute: number,
    private readonly counter: MinuteCounter,
  ) {}

  /** Charges one upstream call sent for `key`. */
  charge(key: string): void {
    void this.counter.add(key);
  }

  /** Refuses, before it runs, an operation estimated at more upstream calls than its caller has left this minute. */
  plugin(): Plugin {
    const check = async (contextValue: unknown, stop: (result: { errors: ReturnType<typeof createGraphQLError>[] }) => void) => {
      const key = (contextValue as { scope?: RequestScope }).scope?.inboundKey;
      if (!key) return;
      const cost = costOf(contextValue) ?? 1;
      const { used, leftMs } = await this.counter.get(key);
      const left = Math.max(0, this.perMinute - used);
      if (cost <= left) return;
      const seconds = Math.ceil(leftMs / 1000);
      stop({
        errors: [
          createGraphQLError(
            `This caller may cause ${this.perMinute} upstream calls a minute and has ${left} left; the operation is estimated at ${cost}. Try again in ${seconds} s.`,
            { extensions: { code: 'RATE_LIMITED', retryAfterSeconds: seconds, http: { status: 429, headers: { 'retry-after': String(seconds) } } } },
          ),
        ],
      });
    };
    return {
      onExecute: ({ args, setResultAndStopExecution }) => check(args.contextValue, setResultAndStopExecution),
      onSubscribe: ({ args, setResultAndStopExecution }) => check(args.contextValue, setResultAndStopExecution),
    };
  }
}
