/**
 * A small OTLP/HTTP trace receiver on loopback, as a collector would be:
 * it accepts `POST /v1/traces` in both encodings the exporter speaks
 * (http/protobuf, decoded here field by field after opentelemetry-proto's
 * trace.proto; and http/json), and keeps every span with its resource, and
 * the raw bodies and headers, for tests to search.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export type AttributeValue = string | number | boolean | AttributeValue[] | null;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client (trace.proto's SpanKind). */
  kind: number;
  attributes: Record<string, AttributeValue>;
  status: { code: number; message: string };
  resource: Record<string, AttributeValue>;
  /** Spans of other traces this one links (a read in flight that served several requests). */
  links: { traceId: string; spanId: string }[];
  /** Start and end, in ms since the epoch (fractional). */
  startMs: number;
  endMs: number;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Each export as it came: content type, headers, and the body decoded to text (protobuf bodies as latin1), for secret searches. */
  exports: { contentType: string; headers: IncomingHttpHeaders; raw: string }[];
  /** Resolves once `predicate` holds for the spans received (polls every 20 ms, up to `timeoutMs`). */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const exports: OtlpReceiver['exports'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      const contentType = req.headers['content-type'] ?? '';
      exports.push({ contentType, headers: req.headers, raw: body.toString('latin1') });
      try {
        spans.push(...(contentType.includes('json') ? fromJson(JSON.parse(body.toString('utf8'))) : fromProtobuf(body)));
      } catch (error) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
        return;
      }
      // An empty ExportTraceServiceResponse: everything accepted.
      if (contentType.includes('json')) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    exports,
    async waitFor(predicate, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      while (!predicate(spans)) {
        if (Date.now() > until) throw new Error(`spans not received in ${timeoutMs} ms; have: ${spans.map((s) => s.name).join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return spans;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// --- http/json: ids are hex strings, integers may come as strings.

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
}
type JsonKeyValue = { key: string; value?: JsonAnyValue };

function jsonValue(value: JsonAnyValue | undefined): AttributeValue {
  if (!value) return null;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(jsonValue);
  return null;
}

function jsonAttributes(list: JsonKeyValue[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));
}

function fromJson(body: {
  resourceSpans?: {
    resource?: { attributes?: JsonKeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        startTimeUnixNano?: string | number;
        endTimeUnixNano?: string | number;
        attributes?: JsonKeyValue[];
        status?: { code?: number; message?: string };
        links?: { traceId: string; spanId: string }[];
      }[];
    }[];
  }[];
}): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const resourceSpans of body.resourceSpans ?? []) {
    const resource = jsonAttributes(resourceSpans.resource?.attributes);
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        out.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind ?? 0,
          attributes: jsonAttributes(span.attributes),
          status: { code: span.status?.code ?? 0, message: span.status?.message ?? '' },
          resource,
          links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId })),
          startMs: Number(BigInt(span.startTimeUnixNano ?? 0) / 1000n) / 1000,
          endMs: Number(BigInt(span.endTimeUnixNano ?? 0) / 1000n) / 1000,
        });
      }
    }
  }
  return out;
}

// --- http/protobuf: the protobuf wire format, read for the fields of trace.proto the tests use.

type Field = { no: number; varint?: bigint; bytes?: Buffer; fixed64?: Buffer };

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buf[at++];
      if (byte === undefined) throw new Error('truncated varint');
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (at < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, varint: varint() });
    else if (wire === 1) {
      out.push({ no, fixed64: buf.subarray(at, at + 8) });
      at += 8;
    } else if (wire === 2) {
      const length = Number(varint());
      out.push({ no, bytes: buf.subarray(at, at + length) });
      at += length;
    } else if (wire === 5) at += 4;
    else throw new Error(`unknown wire type ${wire}`);
  }
  return out;
}

const nanosToMs = (field: Field | undefined) => Number((field?.fixed64?.readBigUInt64LE(0) ?? 0n) / 1000n) / 1000;
const text = (field: Field | undefined) => field?.bytes?.toString('utf8') ?? '';
const hex = (field: Field | undefined) => field?.bytes?.toString('hex') ?? '';

function anyValue(buf: Buffer): AttributeValue {
  const [field] = fields(buf);
  if (!field) return null;
  switch (field.no) {
    case 1:
      return text(field);
    case 2:
      return field.varint === 1n;
    case 3:
      return Number(BigInt.asIntN(64, field.varint ?? 0n));
    case 4:
      return field.fixed64?.readDoubleLE(0) ?? null;
    case 5:
      return fields(field.bytes ?? Buffer.alloc(0))
        .filter((f) => f.no === 1)
        .map((f) => anyValue(f.bytes ?? Buffer.alloc(0)));
    default:
      return null;
  }
}

function keyValues(list: Field[]): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const field of list) {
    const parts = fields(field.bytes ?? Buffer.alloc(0));
    const key = text(parts.find((p) => p.no === 1));
    const value = parts.find((p) => p.no === 2);
    out[key] = value?.bytes ? anyValue(value.bytes) : null;
  }
  return out;
}

function fromProtobuf(body: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const resourceSpans of fields(body).filter((f) => f.no === 1)) {
    const parts = fields(resourceSpans.bytes ?? Buffer.alloc(0));
    const resourceField = parts.find((p) => p.no === 1);
    const resource = keyValues(fields(resourceField?.bytes ?? Buffer.alloc(0)).filter((f) => f.no === 1));
    for (const scopeSpans of parts.filter((p) => p.no === 2)) {
      for (const spanField of fields(scopeSpans.bytes ?? Buffer.alloc(0)).filter((f) => f.no === 2)) {
        const span = fields(spanField.bytes ?? Buffer.alloc(0));
        const one = (no: number) => span.find((f) => f.no === no);
        const status = fields(one(15)?.bytes ?? Buffer.alloc(0));
        out.push({
          traceId: hex(one(1)),
          spanId: hex(one(2)),
          parentSpanId: hex(one(4)),
          name: text(one(5)),
          kind: Number(one(6)?.varint ?? 0n),
          attributes: keyValues(span.filter((f) => f.no === 9)),
          status: { code: Number(status.find((f) => f.no === 3)?.varint ?? 0n), message: text(status.find((f) => f.no === 2)) },
          resource,
          // Span.links is field 13; a Link's trace_id and span_id are its fields 1 and 2.
          links: span
            .filter((f) => f.no === 13)
            .map((link) => {
              const parts = fields(link.bytes ?? Buffer.alloc(0));
              return { traceId: hex(parts.find((p) => p.no === 1)), spanId: hex(parts.find((p) => p.no === 2)) };
            }),
          startMs: nanosToMs(one(7)),
          endMs: nanosToMs(one(8)),
        });
      }
    }
  }
  return out;
}
