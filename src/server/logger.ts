/**
 * The gateway's structured JSON logger (pino), and Yoga's logger on top of
 * it. Credentials never reach a log line: pino's `redact` removes the known
 * header and secret paths, and every argument of every log call is scrubbed
 * first, at any depth: values under a credential or secret key (credential
 * headers, connectionParams, `token`, `runners_token`, `password`,
 * `*prvkey*`, …) become "[Redacted]", and in any text `Bearer`/`Basic`
 * payloads and credential query parameters do too. `Sudo` names a user, not
 * a secret, and stays readable.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ExecutionResult, GraphQLError } from 'graphql';
import { pino, type Logger } from 'pino';
import { isAsyncIterable, type Plugin, type YogaLogger } from 'graphql-yoga';
import type { LogLevel } from '../config.js';
import { InputError, UpstreamError } from '../errors.js';
import type { RequestScope } from '../request-scope.js';
import { REDACTED, scrubText } from '../scrub.js';

export { REDACTED, scrubText };

export type { Logger } from 'pino';

/** Keys whose values are credentials or secrets, whatever the object they sit in. */
const SECRET_KEY =
  /^(authorization|proxy-authorization|private-token|private_token|job-token|job_token|access_token|x-hubzilla-authorization|x-gitlab-token|cookie|set-cookie|connectionparams|token|runners_token|password|passwd|secret|webhook_secret|.*prvkey.*|.*password.*|.*_token)$/i;
const MAX_DEPTH = 8;
const TRACE_ID = /^[0-9a-f]{32}$/;

/** A copy of `value` with every credential removed (see the module comment); Errors become plain objects. */
export function scrub(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return scrubText(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return '[Object]';
  seen.add(value);
  if (value instanceof Error) {
    const plain: Record<string, unknown> = { type: value.name, message: scrubText(value.message), stack: value.stack ? scrubText(value.stack) : undefined };
    for (const [key, inner] of Object.entries(value)) plain[key] = SECRET_KEY.test(key) ? REDACTED : scrub(inner, depth + 1, seen);
    return plain;
  }
  if (value instanceof Headers) return scrub(Object.fromEntries(value.entries()), depth, seen);
  if (Array.isArray(value)) return value.map((item) => scrub(item, depth + 1, seen));
  const copy: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    // A trace id is 32 hex digits, which the text rules take for a secret: kept where it is one.
    if (key === 'traceId' && typeof inner === 'string' && TRACE_ID.test(inner)) copy[key] = inner;
    else copy[key] = SECRET_KEY.test(key) ? REDACTED : scrub(inner, depth + 1, seen);
  }
  return copy;
}

export interface LoggerOptions {
  level: LogLevel;
  /** Append to this file; null: stdout. */
  file: string | null;
}

/**
 * A pino logger writing JSON lines synchronously (nothing is lost on exit) to
 * stdout or a file. Stdout is written through process.stdout, whose errors
 * are events: a reader that went away (EPIPE) must not throw out of a log call
 * and break the request or the shutdown that logged (main.ts ignores EPIPE).
 */
export function createLogger(options: LoggerOptions): Logger {
  const destination = options.file === null ? process.stdout : pino.destination({ dest: options.file, sync: true, append: true, mkdir: true });
  return pino(
    {
      level: options.level,
      base: { service: 'duograph' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers["private-token"]',
          'req.headers["job-token"]',
          'req.headers["x-hubzilla-authorization"]',
          'req.headers["x-gitlab-token"]',
          'req.headers.cookie',
          'connectionParams',
          '*.connectionParams',
          '*.token',
          '*.password',
        ],
        censor: REDACTED,
      },
      hooks: {
        logMethod(args, method) {
          method.apply(this, args.map((arg) => scrub(arg)) as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
}

/** The fields naming a request on its log lines: its id, and its trace while one is recorded. */
export function requestFields(scope: RequestScope | undefined): { requestId?: string; traceId?: string } {
  if (!scope) return {};
  return scope.traceId ? { requestId: scope.requestId, traceId: scope.traceId } : { requestId: scope.requestId };
}

/** The request id of each failed field's error, set by `useRequestIdOnErrors` for the logger: Yoga logs errors without their request. */
const errorScopes = new WeakMap<object, RequestScope>();

/** Names the request on the log lines of its failed fields (Yoga hands the logger the error alone). */
export function useRequestIdOnErrors(): Plugin {
  const tag = (result: ExecutionResult, contextValue: unknown) => {
    const scope = (contextValue as { scope?: RequestScope }).scope;
    if (scope) for (const error of result.errors ?? []) errorScopes.set(error, scope);
  };
  return {
    onExecute: ({ args }) => ({
      onExecuteDone: ({ result }) => {
        if (!isAsyncIterable(result)) return tag(result, args.contextValue);
        return { onNext: ({ result: part }) => tag(part, args.contextValue) };
      },
    }),
  };
}

/** Codes that say the caller got something wrong or may not: the gateway and its upstreams are fine. */
const CALLER_CODES = new Set(['UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND', 'BAD_USER_INPUT']);

/**
 * A failed field as one line without a stack: the caller's mistakes at info,
 * an upstream's failures at warn (the breaker and metrics count them too).
 * Null for anything unexpected, which stays an error with its stack.
 */
function fieldFailure(error: Error): { level: 'debug' | 'info' | 'warn'; entry: Record<string, unknown> } | null {
  const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
  const path = error instanceof GraphQLError ? error.path?.join('.') : undefined;
  if (original instanceof InputError) return { level: 'info', entry: { code: original.code, field: original.field, path } };
  if (original instanceof UpstreamError) {
    // A caller who hung up is nobody's failure: a debug line, as the metrics' client_closed.
    if (original.cancelled) return { level: 'debug', entry: { outcome: 'client_closed', upstream: original.upstream, path } };
    return { level: CALLER_CODES.has(original.code) ? 'info' : 'warn', entry: { code: original.code, upstream: original.upstream, path } };
  }
  return null;
}

/** Yoga's logger interface over pino: an Error argument becomes `err`, other arguments `details`. */
export function yogaLogger(logger: Logger): YogaLogger {
  const forward =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]): void => {
      const [first, ...rest] = args;
      const failure = level === 'error' && first instanceof Error ? fieldFailure(first) : null;
      const request = first instanceof Error ? requestFields(errorScopes.get(first)) : {};
      if (failure && first instanceof Error) logger[failure.level]({ ...request, ...failure.entry }, first.message);
      else if (first instanceof Error) logger[level]({ ...request, err: first, ...(rest.length ? { details: rest } : {}) }, first.message);
      else if (typeof first === 'string') logger[level](rest.length ? { details: rest } : {}, first);
      else logger[level]({ details: args }, 'yoga');
    };
  // Yoga's debug messages ("Processing GraphQL Parameters", ...) name no request, three lines for each: not written.
  return { debug: () => undefined, info: forward('info'), warn: forward('warn'), error: forward('error') };
}

/** Paths logged at debug only: probes and scrapes would drown the rest. */
export const QUIET_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** Logs a request when it arrives (debug, with its headers, redacted) and when its response is done (info). */
export function logRequest(logger: Logger, req: IncomingMessage, res: ServerResponse, scope: RequestScope): void {
  const started = performance.now();
  const url = req.url ?? '/';
  const path = url.split('?')[0] ?? '/';
  if (logger.isLevelEnabled('debug')) logger.debug({ requestId: scope.requestId, req: { method: req.method, url, headers: req.headers } }, 'request received');
  res.once('close', () => {
    const entry = {
      ...requestFields(scope),
      method: req.method,
      path,
      status: res.statusCode,
      durationMs: Math.round(performance.now() - started),
      finished: res.writableFinished,
    };
    if (QUIET_PATHS.has(path)) logger.debug(entry, 'request completed');
    else logger.info(entry, 'request completed');
  });
}
