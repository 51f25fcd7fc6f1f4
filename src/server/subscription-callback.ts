/**
 * Subscriptions for routers in Apollo's HTTP callback protocol
 * (`callback/1.0`): Apollo Router, Hive Gateway and Hive Router send a
 * subscription as a POST whose `extensions.subscription` names a
 * `callbackUrl`, a `subscriptionId`, a `verifier` and a
 * `heartbeatIntervalMs`. No connection is held per subscription: the
 * subscription runs here, and its events go to the callback URL.
 *
 * The flow: the operation runs as any other (the router's request carries
 * the caller's credentials, so the same limits, answer cache and budgets
 * apply); a refusal is answered at once, as JSON errors, with no callback.
 * Otherwise a `check` goes to the callback URL; once the router accepted it
 * (2xx), its request gets `{"data": null}`; then each event is POSTed as
 * `next`, a `check` goes out whenever half the router's heartbeat interval
 * passed without a message (a router times out at one interval, Hive
 * Gateway to the millisecond), and the end as `complete` (with the errors
 * of a stream that failed). A 404 from the callback URL means the router
 * forgot the subscription: it stops, and nothing more is sent. Every
 * message is `content-type: application/json` (Hive Gateway parses no
 * other spelling) with `subscription-protocol: callback/1.0`.
 *
 * A callback URL is chosen by the caller, so it is POSTed to only when it
 * lies under one of SUBSCRIPTION_CALLBACK_URLS (the routers' callback
 * endpoints; none by default): anything else is refused before any call.
 *
 * Written here because no library serves this protocol for Yoga (Apollo
 * Server's plugin serves Apollo Server only); the tests run Hive Gateway's
 * own callback transport against it.
 */
import { GraphQLError } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { streamError } from './mask-error.js';
import { JsonPoster } from '../upstreams/http.js';
import { backoffDelay, sleep } from '../upstreams/resilience.js';

/** What a router asks in `extensions.subscription`. */
export interface CallbackTarget {
  url: URL;
  id: string;
  verifier: string;
  /** The router's heartbeat interval; 0: no heartbeats. */
  heartbeatIntervalMs: number;
}

export interface SubscriptionCallbacksOptions {
  /** URL prefixes a callback URL must lie under (SUBSCRIPTION_CALLBACK_URLS); none: every callback subscription is refused. */
  allowed: readonly string[];
  /** Connect, headers and body timeout of one POST to a router. */
  timeoutMs: number;
  /** Retries of a POST that got no answer or a 5xx, as Apollo Server's plugin does. Default 5. */
  retries?: number;
  /** Why a subscription ended early, for the operator: the callback's origin and the cause, never the verifier. */
  log: (message: string, fields: Record<string, unknown>) => void;
}

/** Apollo Router's default, when the router names none. */
const DEFAULT_HEARTBEAT_MS = 5_000;
/** The shortest gap between two heartbeats, whatever the router asks: a caller must not make this gateway POST in a loop. */
const MIN_HEARTBEAT_GAP_MS = 1_000;
const PROTOCOL_HEADERS = { 'content-type': 'application/json', 'subscription-protocol': 'callback/1.0' } as const;

/** Whether `url` lies under one of the allowed prefixes: same origin, and the prefix's path, whole segments. */
export function callbackAllowed(url: URL, allowed: readonly string[]): boolean {
  if (url.username || url.password) return false;
  return allowed.some((prefix) => {
    const base = new URL(prefix);
    if (base.origin !== url.origin) return false;
    const path = base.pathname.endsWith('/') ? base.pathname : `${base.pathname}/`;
    return url.pathname === base.pathname || url.pathname.startsWith(path);
  });
}

function refusal(message: string, code: string, status: number): GraphQLError {
  return createGraphQLError(message, { extensions: { code, http: { status } } });
}

/** Reads `extensions.subscription`; a GraphQLError says what is wrong with it. */
export function callbackTarget(extension: unknown, allowed: readonly string[]): CallbackTarget | GraphQLError {
  const asked = (extension ?? {}) as Record<string, unknown>;
  const { callbackUrl, subscriptionId, verifier } = asked;
  const heartbeat = asked.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_MS;
  if (
    typeof callbackUrl !== 'string' ||
    typeof subscriptionId !== 'string' ||
    typeof verifier !== 'string' ||
    typeof heartbeat !== 'number' ||
    !Number.isFinite(heartbeat) ||
    heartbeat < 0
  ) {
    return refusal(
      'extensions.subscription needs callbackUrl, subscriptionId and verifier (strings) and heartbeatIntervalMs (a number, 0 or more), as the callback/1.0 protocol says.',
      'BAD_USER_INPUT',
      400,
    );
  }
  let url: URL | null = null;
  try {
    url = new URL(callbackUrl);
  } catch {
    // Refused below.
  }
  if (url === null || !/^https?:$/.test(url.protocol) || !callbackAllowed(url, allowed)) {
    return refusal(
      allowed.length === 0
        ? 'This gateway sends no subscription callbacks: its operator allows no callback URL (SUBSCRIPTION_CALLBACK_URLS).'
        : 'The callback URL is not under one this gateway may call (SUBSCRIPTION_CALLBACK_URLS).',
      'CALLBACK_URL_NOT_ALLOWED',
      403,
    );
  }
  return { url, id: subscriptionId, verifier, heartbeatIntervalMs: heartbeat };
}

/** How a message fared: taken, the router forgot the subscription (404), or it could not be delivered. */
type Delivery = 'ok' | 'gone' | 'failed';

/** The callback subscriptions of one app: the plugin that starts them, and how they end at shutdown. */
export class SubscriptionCallbacks {
  private readonly poster: JsonPoster;
  private readonly running = new Map<Promise<void>, () => void>();

  constructor(private readonly options: SubscriptionCallbacksOptions) {
    this.poster = new JsonPoster(options.timeoutMs);
  }

  /** Callback subscriptions running now. */
  get size(): number {
    return this.running.size;
  }

  plugin(): Plugin {
    const targets = new WeakMap<Request, CallbackTarget>();
    const subscriptions = new WeakSet<Request>();
    return {
      onParams: ({ request, params, setResult }) => {
        const extension = params.extensions?.subscription;
        if (extension === undefined) return;
        const target = callbackTarget(extension, this.options.allowed);
        if (target instanceof GraphQLError) setResult({ errors: [target] });
        else targets.set(request, target);
      },
      onSubscribe({ args }) {
        const request = (args.contextValue as { request?: Request }).request;
        if (request) subscriptions.add(request);
      },
      onResultProcess: ({ request, result, setResultProcessor }) => {
        const target = targets.get(request);
        // A refusal (no stream) is answered as JSON errors, as to any caller: no callback.
        if (!target || !subscriptions.has(request) || !(Symbol.asyncIterator in Object(result))) return;
        setResultProcessor(async (stream, fetchAPI) => {
          const iterator = (stream as AsyncIterable<unknown>)[Symbol.asyncIterator]();
          const json = (body: unknown, status: number) =>
            new fetchAPI.Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8' } });
          // A router may hear the check before it has set up the subscription it just sent (Hive Gateway listens once it reads the stream): a 404 here gets the retries too.
          const checked = await this.deliver(target, { action: 'check' }, true);
          if (checked !== 'ok') {
            await iterator.return?.();
            const error = refusal(
              checked === 'gone'
                ? 'The callback URL does not know this subscription (its check answered 404).'
                : 'The callback URL could not be reached, or refused the check.',
              'CALLBACK_CHECK_FAILED',
              500,
            );
            return json({ data: null, errors: [error.toJSON()] }, 500);
          }
          this.start(target, iterator);
          return json({ data: null }, 200);
        }, 'application/json');
      },
    };
  }

  /** Ends every callback subscription (each sends `complete`) and waits for them, up to `timeoutMs`; then closes the connections. */
  async close(timeoutMs: number): Promise<void> {
    for (const end of this.running.values()) end();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.all(this.running.keys()), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    await this.poster.close();
  }

  private start(target: CallbackTarget, iterator: AsyncIterator<unknown>): void {
    // Ending the stream ends the pump's loop: it then sends `complete`, unless the router had stopped it.
    const end = () => void iterator.return?.();
    const run = this.pump(target, iterator, end).finally(() => this.running.delete(run));
    this.running.set(run, end);
  }

  /** Sends each event, heartbeats between them, and the end; stops without a word once the router forgot the subscription. */
  private async pump(target: CallbackTarget, iterator: AsyncIterator<unknown>, end: () => void): Promise<void> {
    // One message at a time, in order: a heartbeat waits for the event being sent.
    let queue: Promise<Delivery> = Promise.resolve('ok');
    let lastSent = Date.now();
    let stopped = false;
    // At most one heartbeat waiting: a slow POST (retrying) must not pile them up behind it.
    let checkQueued = false;
    const send = (message: Record<string, unknown>): Promise<Delivery> => {
      queue = queue.then(async (before) => {
        if (before !== 'ok' || stopped) return before;
        lastSent = Date.now();
        const delivery = await this.deliver(target, message);
        if (delivery !== 'ok') {
          stopped = true;
          end();
        }
        return delivery;
      });
      return queue;
    };
    const gap = target.heartbeatIntervalMs === 0 ? 0 : Math.max(MIN_HEARTBEAT_GAP_MS, target.heartbeatIntervalMs / 2);
    const heartbeat =
      gap === 0
        ? undefined
        : setInterval(
            () => {
              if (checkQueued || Date.now() - lastSent < gap) return;
              checkQueued = true;
              void send({ action: 'check' }).finally(() => {
                checkQueued = false;
              });
            },
            Math.min(gap, 1_000),
          );
    let errors: unknown[] | undefined;
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done || stopped) break;
        await send({ action: 'next', payload: next.value });
      }
    } catch (error) {
      errors = [streamError(error)];
    } finally {
      clearInterval(heartbeat);
    }
    // Ended here (its stream ran out, failed, or the gateway shuts down): the router hears so. Stopped by the router: nothing more.
    if (!stopped) await send({ action: 'complete', ...(errors ? { errors } : {}) });
  }

  /** POSTs one protocol message, retrying what got no answer or a 5xx (and a 404 to the first check); 404 means the router forgot it, any other 4xx refuses it. */
  private async deliver(target: CallbackTarget, message: Record<string, unknown>, first = false): Promise<Delivery> {
    const body = JSON.stringify({ kind: 'subscription', id: target.id, verifier: target.verifier, ...message });
    const retries = this.options.retries ?? 5;
    let cause = '';
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) await sleep(backoffDelay(attempt, 100, 1_000));
      try {
        const status = await this.poster.post(target.url, body, PROTOCOL_HEADERS);
        if (status >= 200 && status < 300) return 'ok';
        cause = `status ${status}`;
        if (status === 404 && !first) return 'gone';
        if (status < 500 && status !== 404) break;
      } catch (error) {
        cause = error instanceof Error ? error.message : 'no answer';
      }
    }
    if (first && cause === 'status 404') return 'gone';
    this.options.log('subscription callback: the router did not take a message; the subscription ends', {
      callback: target.url.origin,
      action: message.action,
      cause,
    });
    return 'failed';
  }
}
