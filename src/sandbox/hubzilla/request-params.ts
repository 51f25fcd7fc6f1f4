/**
 * PHP's `$_REQUEST` and `$_FILES` as the real handlers see them: query string
 * and form body merged (the body wins), `name[]` keys collected into arrays,
 * multipart files split out. JSON bodies are not parsed at all: PHP does not
 * populate `$_POST` from them, which is why the real item/update answers a JSON
 * post with "no content" (reference §1.3, err_item_update_json_body.txt).
 */

export interface UploadedFile {
  /** The client's file name. */
  name: string;
  /** The part's Content-Type ('' when absent). */
  type: string;
  data: Buffer;
}

export interface RequestParams {
  values: Map<string, string | string[]>;
  files: Map<string, UploadedFile>;
}

function put(values: Map<string, string | string[]>, rawKey: string, value: string): void {
  const bracket = rawKey.indexOf('[');
  if (bracket > 0 && rawKey.endsWith(']')) {
    const key = rawKey.slice(0, bracket);
    const prev = values.get(key);
    if (Array.isArray(prev)) prev.push(value);
    else values.set(key, [value]);
    return;
  }
  values.set(rawKey, value);
}

/** Decodes `application/x-www-form-urlencoded` text (`+` is a space) into `values`. */
function putUrlEncoded(values: Map<string, string | string[]>, text: string): void {
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawKey = eq < 0 ? pair : pair.slice(0, eq);
    const rawValue = eq < 0 ? '' : pair.slice(eq + 1);
    const decode = (s: string): string => {
      try {
        return decodeURIComponent(s.replace(/\+/g, ' '));
      } catch {
        return s;
      }
    };
    put(values, decode(rawKey), decode(rawValue));
  }
}

/** Splits a multipart/form-data body into fields and files. */
function putMultipart(params: RequestParams, body: Buffer, boundary: string): void {
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  let pos = body.indexOf(delimiter);
  while (pos >= 0) {
    let start = pos + delimiter.length;
    if (body.toString('latin1', start, start + 2) === '--') break;
    if (body.toString('latin1', start, start + 2) === '\r\n') start += 2;
    const next = body.indexOf(delimiter, start);
    if (next < 0) break;
    let end = next;
    if (body.toString('latin1', end - 2, end) === '\r\n') end -= 2;
    const part = body.subarray(start, end);
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd >= 0) {
      const headers = part.toString('utf8', 0, headerEnd);
      const content = part.subarray(headerEnd + 4);
      const disposition = /content-disposition:([^\r\n]*)/i.exec(headers)?.[1] ?? '';
      const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
      const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
      const type = /content-type:\s*([^\r\n;]*)/i.exec(headers)?.[1]?.trim() ?? '';
      if (name !== undefined) {
        if (filename !== undefined) {
          // PHP skips an empty file input (UPLOAD_ERR_NO_FILE).
          if (filename !== '' || content.length > 0) {
            params.files.set(name.replace(/\[\]$/, ''), { name: filename, type, data: Buffer.from(content) });
          }
        } else {
          put(params.values, name, content.toString('utf8'));
        }
      }
    }
    pos = next;
  }
}

/** Builds `$_REQUEST`/`$_FILES` from the raw query string and body. */
export function parseRequestParams(search: string, body: Buffer, contentType: string | undefined): RequestParams {
  const params: RequestParams = { values: new Map(), files: new Map() };
  putUrlEncoded(params.values, search);
  const type = (contentType ?? '').toLowerCase();
  if (body.length > 0) {
    if (type.startsWith('multipart/form-data')) {
      const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType ?? '');
      const b = boundary?.[1] ?? boundary?.[2];
      if (b) putMultipart(params, body, b.trim());
    } else if (type.startsWith('application/x-www-form-urlencoded')) {
      // PHP fills $_POST only for these two types; anything else (JSON included) is ignored.
      putUrlEncoded(params.values, body.toString('utf8'));
    }
  }
  return params;
}

/** A scalar request value (PHP `$_REQUEST[key]` as a string); undefined when absent or an array. */
export function param(p: RequestParams, key: string): string | undefined {
  const v = p.values.get(key);
  return typeof v === 'string' ? v : undefined;
}

/** A request value as a list: `key[]` arrays as sent, a scalar split on commas (Hubzilla's perms2str()). */
export function paramList(p: RequestParams, key: string): string[] | undefined {
  const v = p.values.get(key);
  if (v === undefined) return undefined;
  const list = Array.isArray(v) ? v : v.split(',');
  return list.map((s) => s.trim()).filter((s) => s !== '');
}

/** PHP `intval()` of a request value (0 when absent or not numeric). */
export function intParam(p: RequestParams, key: string): number {
  const v = param(p, key);
  if (v === undefined) return 0;
  const n = Number.parseInt(v.trim(), 10);
  return Number.isNaN(n) ? 0 : n;
}

/** PHP truthiness of a request value (`x($_REQUEST, k)` / `intval`-style flags). */
export function flagParam(p: RequestParams, key: string): boolean {
  const v = param(p, key);
  return v !== undefined && v !== '' && v !== '0' && v.toLowerCase() !== 'false';
}
