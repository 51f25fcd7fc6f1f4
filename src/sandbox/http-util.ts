/**
 * Small HTTP helpers shared by the sandbox simulators. node: builtins only:
 * the sandboxes import nothing from the rest of src/.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A JSON response a handler returns; the server writes it. */
export interface JsonResponse {
  status: number;
  /** Serialised with JSON.stringify; `undefined` sends an empty body. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** Splits a raw request target into its still-encoded path and its query string. */
export function splitTarget(target: string): { path: string; search: string } {
  const q = target.indexOf('?');
  return q < 0 ? { path: target, search: '' } : { path: target.slice(0, q), search: target.slice(q + 1) };
}

/**
 * Parses a query string the way Rack does for plain keys: every value of a
 * repeated key is kept in order, `+` is a space. Keys keep their brackets
 * (`scope[]`, `custom_attributes[key]`).
 */
export function parseQuery(search: string): Record<string, string[]> {
  const query: Record<string, string[]> = {};
  for (const [key, value] of new URLSearchParams(search)) {
    (query[key] ??= []).push(value);
  }
  return query;
}

/** The request's headers with lower-case names, repeated values joined by ", ". */
export function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** Writes a JSON response (Content-Type application/json) unless the socket is gone. */
export function writeJson(res: ServerResponse, response: JsonResponse): void {
  if (res.destroyed || res.writableEnded) return;
  const payload = response.body === undefined ? '' : JSON.stringify(response.body);
  res.writeHead(response.status, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(payload)),
    ...response.headers,
  });
  res.end(payload);
}

/** Resolves after `ms` milliseconds (at once for 0 or less). */
export function delay(ms: number): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => setTimeout(resolve, ms));
}
