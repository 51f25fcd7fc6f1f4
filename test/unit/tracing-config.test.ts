/**
 * The standard OTEL_* variables as the gateway reads them: traces on only
 * with an OTLP endpoint, the spec's defaults, and one clear line for a value
 * it cannot use (never quoting a header value, which may be a key).
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, tracingConfig } from '../../src/config.js';

describe('OTEL_* configuration', () => {
  it('is off without an endpoint, and when the SDK or the exporter is turned off', () => {
    expect(loadConfig({}).tracing).toBeNull();
    expect(tracingConfig({ OTEL_SERVICE_NAME: 'x' })).toBeNull();
    expect(tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' })).toBeNull();
    expect(tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeNull();
  });

  it("takes the spec's defaults: /v1/traces on the base endpoint, protobuf, parent-based always on, 5 s batches", () => {
    expect(tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toEqual({
      url: new URL('http://collector:4318/v1/traces'),
      protocol: 'http/protobuf',
      headers: {},
      timeoutMs: 10_000,
      serviceName: 'duograph',
      resourceAttributes: {},
      sampler: { parentBased: true, root: 'always_on' },
      samplerRatio: 1,
      scheduleDelayMs: 1_000,
    });
  });

  it('lets the _TRACES_ forms win, and decodes header and resource lists', () => {
    const config = tracingConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/otlp/v1/traces',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-general=1',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'api-key=a%2Cb%3Dc, x-team = graph',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.version=0.1.0',
      OTEL_TRACES_SAMPLER: 'traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    });
    expect(config).toMatchObject({
      url: new URL('https://traces.example.com/otlp/v1/traces'),
      protocol: 'http/json',
      headers: { 'api-key': 'a,b=c', 'x-team': 'graph' },
      resourceAttributes: { 'deployment.environment': 'prod', 'service.version': '0.1.0' },
      sampler: { parentBased: false, root: 'traceidratio' },
      samplerRatio: 0.25,
    });
  });

  it('refuses what it cannot use, in one line naming the variable', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    const cases: [Record<string, string>, string][] = [
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://c' }, 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL'],
      [
        { ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
        'OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (grpc is not built in), got "grpc"',
      ],
      [{ ...endpoint, OTEL_TRACES_SAMPLER: 'sometimes' }, 'OTEL_TRACES_SAMPLER must be one of'],
      [{ ...endpoint, OTEL_TRACES_SAMPLER_ARG: '2' }, 'OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got "2"'],
      [{ ...endpoint, OTEL_TRACES_EXPORTER: 'zipkin' }, 'OTEL_TRACES_EXPORTER must be otlp or none'],
      [
        { ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: 'api-key=%E0%A4%A' },
        'OTEL_EXPORTER_OTLP_HEADERS has a value that is not percent-encoded correctly (key "api-key")',
      ],
      [{ ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: '=secret-value' }, 'OTEL_EXPORTER_OTLP_HEADERS must be a list of key=value pairs'],
    ];
    for (const [env, message] of cases) {
      expect(() => loadConfig(env), message).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(message);
    }
    // A header value is never quoted: it may be the collector's key.
    expect(() => loadConfig({ ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: 'api-key=%E0%A4%A' })).not.toThrow(/%E0/);
  });

  it('reads TRACE_RESOLVERS as coordinates, and trusted documents only with documents', () => {
    expect(loadConfig({ TRACE_RESOLVERS: 'Project.jobs, Job.artifacts' }).traceResolvers).toEqual(['Project.jobs', 'Job.artifacts']);
    expect(loadConfig({ TRACE_RESOLVERS: '*' }).traceResolvers).toEqual(['*']);
    expect(() => loadConfig({ TRACE_RESOLVERS: 'Project' })).toThrow('TRACE_RESOLVERS must list Type.field coordinates or *, got "Project"');
    expect(() => loadConfig({ PERSISTED_DOCUMENTS_ONLY: 'true' })).toThrow('PERSISTED_DOCUMENTS_ONLY needs PERSISTED_DOCUMENTS');
  });
});
