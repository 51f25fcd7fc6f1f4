/**
 * What a handler returns and how it goes on the wire. The real server has four
 * outcomes (reference §1.3): `json_return_and_die()` (JSON with a
 * `Content-type: application/json` header, lower-case t), a handler returning
 * `false` or calling `killme()` (empty body, PHP's default text/html), a handler
 * returning `null` (empty body, `Content-Type: application/json`), and a PHP
 * fatal error (500, empty body).
 */
import type { ServerResponse } from 'node:http';

export type ApiResult = { kind: 'json'; value: unknown } | { kind: 'empty-html' } | { kind: 'empty-json' } | { kind: 'crash' };

/** `json_return_and_die($value)`. */
export function json(value: unknown): ApiResult {
  return { kind: 'json', value };
}

/** The handler returned false or called killme(): 200, empty body, text/html. */
export const EMPTY_HTML: ApiResult = { kind: 'empty-html' };
/** The handler returned null: 200, empty body, but `Content-Type: application/json`. */
export const EMPTY_JSON: ApiResult = { kind: 'empty-json' };
/** A PHP fatal error (TypeError etc.): 500 with an empty body. */
export const CRASH: ApiResult = { kind: 'crash' };

const HTML = 'text/html; charset=UTF-8';

/**
 * PHP's `json_encode()` with default flags: slashes escaped as `\/` and every
 * non-ASCII character as `\uXXXX` (UTF-16 code units). Parses to the same value
 * as JSON.stringify, but the bytes match the real server's.
 */
export function phpJsonEncode(value: unknown): string {
  return JSON.stringify(value)
    .replace(/\//g, '\\/')
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Headers every PHP response of the real hub carries (session_start() adds the cache ones). */
function phpHeaders(res: ServerResponse, cookies: readonly string[]): void {
  res.setHeader('X-Powered-By', 'PHP/8.2.36');
  res.setHeader('Expires', 'Thu, 19 Nov 1981 08:52:00 GMT');
  res.setHeader('Cache-Control', 'no-store, no-cache, must-revalidate');
  res.setHeader('Pragma', 'no-cache');
  if (cookies.length > 0) res.setHeader('Set-Cookie', [...cookies]);
}

function finish(res: ServerResponse, status: number, contentTypeHeader: string, contentType: string, body: string): void {
  if (res.destroyed || res.writableEnded) return;
  res.statusCode = status;
  // Node keeps header-name case as given: the real hub sends both spellings.
  res.setHeader(contentTypeHeader, contentType);
  res.setHeader('Content-Length', String(Buffer.byteLength(body)));
  res.end(body);
}

/** Writes a handler's result. */
export function writeResult(res: ServerResponse, result: ApiResult, cookies: readonly string[]): void {
  phpHeaders(res, cookies);
  switch (result.kind) {
    case 'json':
      finish(res, 200, 'Content-type', 'application/json', phpJsonEncode(result.value));
      return;
    case 'empty-html':
      finish(res, 200, 'Content-type', HTML, '');
      return;
    case 'empty-json':
      finish(res, 200, 'Content-Type', 'application/json', '');
      return;
    case 'crash':
      finish(res, 500, 'Content-type', HTML, '');
      return;
  }
}

/**
 * `retry_basic_auth()`: the challenge header, then 401 and the fixed body
 * `This api requires login` (err_files_noauth.txt, err_files_badpass.txt).
 */
export function writeUnauthorized(res: ServerResponse, cookies: readonly string[]): void {
  phpHeaders(res, cookies);
  res.setHeader('WWW-Authenticate', 'Basic realm="hubzilla"');
  finish(res, 401, 'Content-type', HTML, 'This api requires login');
}

/** Unknown endpoint: 404 with `{"error":"not implemented"}` (err_unknown_endpoint.txt). */
export function writeNotImplemented(res: ServerResponse, cookies: readonly string[]): void {
  phpHeaders(res, cookies);
  finish(res, 404, 'Content-Type', 'application/json', '{"error":"not implemented"}');
}

/** The unversioned `version` endpoint's XML form (version_xml.txt). */
export function writeXml(res: ServerResponse, xml: string, cookies: readonly string[]): void {
  phpHeaders(res, cookies);
  finish(res, 200, 'Content-type', 'application/xml', xml);
}

/** A plain JSON answer outside the API (the OAuth2 token endpoint uses `Content-Type`). */
export function writeOAuthJson(res: ServerResponse, status: number, value: unknown, cookies: readonly string[]): void {
  phpHeaders(res, cookies);
  res.setHeader('Cache-Control', 'no-store');
  finish(res, status, 'Content-Type', 'application/json', phpJsonEncode(value));
}

/** A non-API page of the hub: the sandbox serves none of them. */
export function writeHtmlNotFound(res: ServerResponse, cookies: readonly string[]): void {
  phpHeaders(res, cookies);
  finish(res, 404, 'Content-type', HTML, '<!DOCTYPE html><html><body><h1>Not Found</h1></body></html>');
}
