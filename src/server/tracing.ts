/**
 * OpenTelemetry traces, exported over OTLP/HTTP. On only when an endpoint is
 * configured (config.ts, the standard OTEL_* variables); off, the SDK is not
 * even loaded, no context manager runs, and the upstream client has no tracer:
 * nothing costs anything.
 *
 * Spans: one per HTTP request (SERVER, continuing the caller's W3C
 * `traceparent`), one per GraphQL operation, one per upstream call (CLIENT,
 * whose context goes to GitLab and Hubzilla as `traceparent`), one per
 * subscription event delivered, and one per resolver only for the fields
 * TRACE_RESOLVERS names. No attribute holds a credential, a variable value,
 * a query string or a document: operations are named by type and name,
 * upstream calls by route template, requests by route.
 *
 * Below a span that is not sampled, no span is started: every sampler that
 * can be configured would decide for a child as it did for its parent
 * (always_on and always_off alike for all, traceidratio by the trace id they
 * share, the parent-based ones by the parent). A request not sampled costs
 * its SERVER span and the trace context it sends upstream, nothing per
 * operation or call.
 *
 * A span's parent is handed down in the request's scope (request-scope.ts),
 * not found through a context manager: OpenTelemetry's, on AsyncLocalStorage,
 * costs about 8% of the CPU of the 100x20 query on Node 20 even for requests
 * it does not sample. Only resolver spans need one (a resolver's calls are
 * its children), so it runs only when TRACE_RESOLVERS asks for them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  context,
  type Context as OtelContext,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import { defaultFieldResolver, type ExecutionResult, getOperationAST, type GraphQLError, type GraphQLSchema, isObjectType } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { ConfigError, type TracingConfig } from '../config.js';
import type { RequestScope } from '../request-scope.js';
import { transportCause, type UpstreamOutcome, type UpstreamSpan, type UpstreamSpanCall, type UpstreamTracer } from '../upstreams/http.js';
import { scrubText } from '../scrub.js';
import { costOf } from './limits.js';
import { requestSecrets } from './metrics.js';

export interface Tracing {
  /** Spans of upstream calls, for the HttpClients. */
  readonly upstream: UpstreamTracer;
  /** The Envelop plugin of operation and subscription event spans. */
  plugin(): Plugin;
  /** Starts the SERVER span of the request, continuing the caller's trace context, as the parent of what `scope` does; it ends with the response. */
  serve(req: IncomingMessage, res: ServerResponse, route: string, scope: RequestScope): void;
  /** Gives the resolvers of these `Type.field` coordinates (`*`: every field with its own resolver) a span each. */
  traceResolvers(schema: GraphQLSchema, coordinates: readonly string[]): void;
  /** Sends the spans still waiting and stops. */
  shutdown(): Promise<void>;
}

const NAME = 'duograph';

/** Starts the SDK and returns the tracing of this process; with `resolvers`, also the context manager resolver spans need. */
export async function startTracing(config: TracingConfig, options: { resolvers: boolean; log?: (message: string) => void }): Promise<Tracing> {
  // Loaded here only: a gateway without an endpoint never loads the SDK.
  const [sdk, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, { resourceFromAttributes }, exporterModule] = await Promise.all([
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    config.protocol === 'http/json' ? import('@opentelemetry/exporter-trace-otlp-http') : import('@opentelemetry/exporter-trace-otlp-proto'),
  ]);
  const root =
    config.sampler.root === 'always_off'
      ? new sdk.AlwaysOffSampler()
      : config.sampler.root === 'traceidratio'
        ? new sdk.TraceIdRatioBasedSampler(config.samplerRatio)
        : new sdk.AlwaysOnSampler();
  const otlp = new exporterModule.OTLPTraceExporter({ url: config.url.href, headers: { ...config.headers }, timeoutMillis: config.timeoutMs });
  // Spans the collector does not take are dropped (serving goes on); the operator hears of it once, and once when it answers again.
  const report = exportReporter(config.url.host, options.log);
  const exporter: typeof otlp = Object.assign(Object.create(otlp) as typeof otlp, {
    export: (spans: Parameters<typeof otlp.export>[0], done: Parameters<typeof otlp.export>[1]) =>
      otlp.export(spans, (result) => {
        report(result);
        done(result);
      }),
  });
  const provider = new sdk.TracerProvider({
    resource: resourceFromAttributes({ ...config.resourceAttributes, 'service.name': config.serviceName }),
    sampler: config.sampler.parentBased ? new sdk.ParentBasedSampler({ root }) : root,
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter, scheduledDelayMillis: config.scheduleDelayMs })],
  });
  if (options.resolvers) context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  return new OtelTracing(provider.getTracer(NAME), new W3CTraceContextPropagator(), options.resolvers, () => provider.shutdown());
}

/**
 * Logs the first failed export (with its cause, never the collector's URL
 * path or headers, which may hold a key) and the first success after it.
 */
function exportReporter(host: string, log: ((message: string) => void) | undefined): (result: { code: number; error?: Error }) => void {
  let failing = false;
  return (result) => {
    const failed = result.code !== 0;
    if (failed === failing) return;
    failing = failed;
    if (failed) log?.(`traces: the collector at ${host} did not take spans (${transportCause(result.error) ?? 'refused'}); spans are dropped until it does`);
    else log?.(`traces: the collector at ${host} takes spans again`);
  };
}

type Outcome = 'success' | 'partial' | 'error';

function outcomeOf(result: ExecutionResult): Outcome {
  if (!result.errors?.length) return 'success';
  return result.data ? 'partial' : 'error';
}

/** The error codes of a result: what an error is, never what it says. Seen before masking, so also read from the original error. */
function errorCodes(result: ExecutionResult): string[] {
  const code = (error: GraphQLError) => error.extensions?.code ?? (error.originalError as { code?: unknown } | undefined)?.code ?? 'INTERNAL_SERVER_ERROR';
  return [...new Set((result.errors ?? []).map((e) => String(code(e))))];
}

function endWith(span: Span, result: ExecutionResult): void {
  const outcome = outcomeOf(result);
  span.setAttribute('duograph.outcome', outcome);
  if (outcome !== 'success') {
    span.setAttribute('graphql.error.codes', errorCodes(result));
    if (outcome === 'error') span.setStatus({ code: SpanStatusCode.ERROR, message: errorCodes(result).join(',') });
  }
  span.end();
}

class OtelTracing implements Tracing {
  readonly upstream: UpstreamTracer;

  constructor(
    private readonly tracer: Tracer,
    private readonly propagator: TextMapPropagator,
    /** Resolver spans are on, and with them the context manager: a call's parent may be the resolver running it. */
    private readonly resolvers: boolean,
    readonly shutdown: () => Promise<void>,
  ) {
    this.upstream = {
      start: (describe, headers, scope): UpstreamSpan => {
        const parent = this.parentOf(scope);
        if (parent && !parent.isRecording()) {
          // Not sampled: the call carries the request's trace context, with its sampled flag off.
          propagator.inject(trace.setSpan(ROOT_CONTEXT, parent), headers, defaultTextMapSetter);
          return UNTRACED;
        }
        const call: UpstreamSpanCall = describe();
        const span = tracer.startSpan(
          `${call.method} ${call.route}`,
          {
            kind: SpanKind.CLIENT,
            attributes: {
              'http.request.method': call.method,
              'url.template': call.route,
              'duograph.upstream': call.upstream,
              'duograph.upstream.breaker': call.breaker,
            },
          },
          parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT,
        );
        propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
        return {
          end: (outcome) => endUpstream(span, outcome),
          // A read in flight that another request joined: its span links that request's.
          link: (joiner) => {
            const other = joiner.span as Span | undefined;
            if (other?.isRecording()) span.addLink({ context: other.spanContext() });
          },
        };
      },
    };
  }

  /** The span a span of `scope` starts under: the running resolver's (when those are on), else the scope's; none for a root. */
  private parentOf(scope: RequestScope | undefined): Span | undefined {
    return (this.resolvers ? trace.getSpan(context.active()) : undefined) ?? (scope?.span as Span | undefined);
  }

  serve(req: IncomingMessage, res: ServerResponse, route: string, scope: RequestScope): void {
    const parent = this.propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
    const method = req.method ?? 'GET';
    const span = this.tracer.startSpan(
      `${method} ${route}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'http.route': route, 'duograph.request_id': scope.requestId } },
      parent,
    );
    scope.span = span;
    if (span.isRecording()) scope.traceId = span.spanContext().traceId;
    res.once('close', () => {
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      if (!res.writableFinished) span.setAttribute('duograph.client_closed', true);
      span.end();
    });
  }

  plugin(): Plugin {
    const tracer = this.tracer;
    const resolvers = this.resolvers;
    const start = (args: { document: Parameters<typeof getOperationAST>[0]; operationName?: string | null; contextValue: unknown }): OperationSpan => {
      const { request, scope } = args.contextValue as { request?: Request; scope?: RequestScope };
      const parent = this.parentOf(scope);
      // Not sampled: the request's span stands in (its methods do nothing), and the calls find it as their parent.
      if (parent && !parent.isRecording()) return { span: parent, recording: false, name: undefined, type: '', active: trace.setSpan(ROOT_CONTEXT, parent) };
      const operation = getOperationAST(args.document, args.operationName ?? undefined);
      const type = operation?.operation ?? 'unknown';
      const name = safeName(args.operationName ?? operation?.name?.value, request);
      const span = tracer.startSpan(
        name ? `${type} ${scrubText(name)}` : type,
        { attributes: { 'graphql.operation.type': type, ...(name ? { 'graphql.operation.name': scrubText(name) } : {}) } },
        parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT,
      );
      // The operation's upstream calls start under it.
      if (scope) scope.span = span;
      return { span, recording: true, name, type, active: trace.setSpan(ROOT_CONTEXT, span) };
    };
    return {
      onExecute({ args, executeFn, setExecuteFn }) {
        const op = start(args);
        // Resolver spans find the operation's span as the active one.
        if (resolvers) setExecuteFn((executeArgs) => context.with(op.active, () => executeFn(executeArgs)));
        if (!op.recording) return;
        return {
          onExecuteDone({ result }) {
            const cost = costOf(args.contextValue);
            if (cost !== undefined) op.span.setAttribute('duograph.cost.estimate', cost);
            if (!isAsyncIterable(result)) return endWith(op.span, result);
            // @defer and @stream: the operation ends with its last part.
            let worst: ExecutionResult = { data: {} };
            return {
              onNext({ result: part }) {
                if (outcomeOf(part) !== 'success') worst = part;
              },
              onEnd() {
                endWith(op.span, worst);
              },
            };
          },
        };
      },
      onSubscribe({ args, subscribeFn, setSubscribeFn }) {
        const op = start(args);
        if (resolvers) setSubscribeFn((subscribeArgs) => context.with(op.active, () => subscribeFn(subscribeArgs)));
        if (!op.recording) return;
        return {
          onSubscribeError() {
            op.span.setStatus({ code: SpanStatusCode.ERROR });
            op.span.end();
          },
          onSubscribeResult({ result }) {
            const cost = costOf(args.contextValue);
            if (cost !== undefined) op.span.setAttribute('duograph.cost.estimate', cost);
            if (!isAsyncIterable(result)) return endWith(op.span, result);
            // The subscription's span covers its start; each event delivered gets a span of its own under it.
            op.span.setAttribute('duograph.outcome', 'subscribed');
            op.span.end();
            let events = 0;
            return {
              onNext({ result: event }) {
                events++;
                const span = tracer.startSpan(
                  `${op.type} ${scrubText(op.name ?? '')} event`.replace('  ', ' '),
                  {
                    attributes: {
                      'graphql.operation.type': op.type,
                      ...(op.name ? { 'graphql.operation.name': scrubText(op.name) } : {}),
                      'duograph.event.index': events,
                    },
                  },
                  op.active,
                );
                endWith(span, event);
              },
            };
          },
        };
      },
    };
  }

  traceResolvers(schema: GraphQLSchema, coordinates: readonly string[]): void {
    const all = coordinates.includes('*');
    const named = new Set(coordinates);
    for (const coordinate of named) {
      if (coordinate === '*') continue;
      const [typeName = '', fieldName = ''] = coordinate.split('.');
      const type = schema.getType(typeName);
      if (!isObjectType(type) || !type.getFields()[fieldName]) throw new ConfigError(`TRACE_RESOLVERS names ${coordinate}, which the schema does not have`);
    }
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      for (const field of Object.values(type.getFields())) {
        const coordinate = `${type.name}.${field.name}`;
        const own = field.resolve !== undefined && field.resolve !== defaultFieldResolver;
        if (!(named.has(coordinate) || (all && own))) continue;
        const resolve = field.resolve ?? defaultFieldResolver;
        const tracer = this.tracer;
        field.resolve = (source, args, contextValue, info) =>
          tracer.startActiveSpan(`resolve ${coordinate}`, { attributes: { 'graphql.field.coordinate': coordinate } }, (span) => {
            let value: unknown;
            try {
              value = resolve(source, args, contextValue, info);
            } catch (error) {
              span.setStatus({ code: SpanStatusCode.ERROR });
              span.end();
              throw error;
            }
            if (value instanceof Promise) {
              return value.then(
                (resolved) => {
                  span.end();
                  return resolved;
                },
                (error: unknown) => {
                  span.setStatus({ code: SpanStatusCode.ERROR });
                  span.end();
                  throw error;
                },
              );
            }
            span.end();
            return value;
          });
      }
    }
  }
}

/** The span of an operation, or of the request standing in for it when not sampled. */
interface OperationSpan {
  span: Span;
  recording: boolean;
  name: string | undefined;
  type: string;
  /** A context with `span` as the active one, for the spans under it. */
  active: OtelContext;
}

/** An upstream call of a request not sampled. */
const UNTRACED: UpstreamSpan = { end() {} };

function endUpstream(span: Span, outcome: UpstreamOutcome): void {
  if (typeof outcome.status === 'number') {
    span.setAttribute('http.response.status_code', outcome.status);
    if (outcome.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  } else {
    span.setAttribute('error.type', outcome.status);
    if (outcome.status !== 'client_closed') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.status });
  }
  if (outcome.retries > 0) span.setAttribute('http.request.resend_count', outcome.retries);
  if (outcome.bytes !== undefined) span.setAttribute('http.response.body.size', outcome.bytes);
  if (outcome.upstreamRequestId) span.setAttribute('duograph.upstream.request_id', outcome.upstreamRequestId);
  if (outcome.cache) span.setAttribute('duograph.cache', outcome.cache);
  span.end();
}

/** An operation name as metrics show it: none when it holds a credential of its request, cut at 64 characters. */
function safeName(name: string | undefined, request: Request | undefined): string | undefined {
  if (!name) return undefined;
  if (requestSecrets(request).some((secret) => name.includes(secret) || (name.length >= 8 && secret.includes(name)))) return 'redacted';
  return name.slice(0, 64);
}
