/**
 * GitLab's ways of saying "the caller got this wrong", turned into a flat
 * list of user errors for mutation payloads: the 400 validation map
 * (`{"message":{"name":["has already been taken"]}}`, nested for embedded
 * entities), grape's 400s (`{"error":"name is missing"}`), the old
 * `400 (Bad request) "title" not given`, 409 conflicts, 403 role refusals,
 * 422, 405 and 412. Anything else is not a user error and returns null.
 */
import { UpstreamError } from '../../errors.js';
import { scrubText } from '../../scrub.js';
import { upstreamMessage } from '../http.js';

export type UserErrorCode = 'INVALID' | 'MISSING' | 'TAKEN' | 'CONFLICT' | 'FORBIDDEN' | 'NOT_ALLOWED' | 'PRECONDITION_FAILED';

export interface UserErrorRecord {
  message: string;
  /** GitLab's parameter path, snake_case, e.g. ['namespace', 'path']; empty when the error is about the whole request. */
  field: string[];
  code: UserErrorCode;
}

/**
 * The parameter a validation key stands for. A dotted key names an attribute
 * of an associated record (`project_namespace.name`, what gitlab.com answers
 * for a taken project name): the caller sent its last part (`name`).
 */
function paramOf(key: string): string {
  return key.slice(key.lastIndexOf('.') + 1);
}

/** How deep a validation map is read (GitLab nests one level per embedded entity), and how many errors one answer may give. */
const MAX_DEPTH = 8;
const MAX_ERRORS = 50;

function fromValidationMap(map: Record<string, unknown>, path: string[], depth = 0): UserErrorRecord[] {
  const errors: UserErrorRecord[] = [];
  const seen = new Set<string>();
  const push = (error: UserErrorRecord) => {
    const key = `${error.field.join('.')}\u0000${error.message}`;
    if (!seen.has(key)) errors.push(error);
    seen.add(key);
  };
  for (const [dotted, value] of Object.entries(map)) {
    const key = paramOf(dotted);
    const field = key === 'base' ? path : [...path, key];
    if (Array.isArray(value)) {
      for (const text of value) {
        const message = String(text);
        const prefix = key === 'base' ? '' : `${key} `;
        push({ message: `${prefix}${message}`, field, code: /already been taken|already exists/i.test(message) ? 'TAKEN' : 'INVALID' });
      }
    } else if (value && typeof value === 'object' && depth < MAX_DEPTH) {
      for (const error of fromValidationMap(value as Record<string, unknown>, field, depth + 1)) push(error);
    } else if (typeof value === 'string') {
      push({ message: `${key} ${value}`, field, code: 'INVALID' });
    }
  }
  return errors;
}

/** Field names at the start of grape's messages: "name, path are missing, ..." or "visibility does not have a valid value". */
function grapeFields(text: string): string[] {
  const match = /^([a-z_][a-z0-9_[\]]*(?:, [a-z_][a-z0-9_[\]]*)*) (?:is|are) (missing|invalid|empty)|^([a-z_][a-z0-9_[\]]*) does not have a valid value/.exec(
    text,
  );
  const names = match?.[1] ?? match?.[3];
  return names ? names.split(', ') : [];
}

function fromBadRequest(body: unknown): UserErrorRecord[] {
  const record = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  if (record.message && typeof record.message === 'object' && !Array.isArray(record.message)) {
    const errors = fromValidationMap(record.message as Record<string, unknown>, []);
    // A map holding no message GitLab would write (nested past reason): say it short, as it came.
    if (errors.length > 0) return errors;
    return [{ message: upstreamMessage(body) ?? 'The request was rejected.', field: [], code: 'INVALID' }];
  }
  const text = upstreamMessage(body) ?? 'The request was rejected.';
  const notGiven = /"([^"]+)" not given/.exec(text);
  if (notGiven?.[1]) return [{ message: text, field: [notGiven[1]], code: 'MISSING' }];
  const fields = grapeFields(text);
  const code: UserErrorCode = /missing|not given|empty/.test(text) ? 'MISSING' : 'INVALID';
  if (fields.length > 1) return fields.map((field) => ({ message: text, field: [field], code }));
  return [{ message: text, field: fields, code }];
}

const STATUS_CODES: Readonly<Record<number, UserErrorCode>> = {
  403: 'FORBIDDEN',
  405: 'NOT_ALLOWED',
  409: 'CONFLICT',
  412: 'PRECONDITION_FAILED',
  422: 'INVALID',
};

/**
 * The user errors an upstream failure stands for, or null when it is not the
 * caller's to fix. GitLab's text goes to the caller scrubbed of anything
 * credential-shaped, as the top-level error and the logs are, and capped.
 */
export function userErrorsOf(error: unknown): UserErrorRecord[] | null {
  const errors = rawUserErrorsOf(error);
  if (!errors) return null;
  return errors.slice(0, MAX_ERRORS).map((e) => ({ ...e, message: scrubText(e.message.slice(0, 300)), field: e.field.map((f) => f.slice(0, 100)) }));
}

function rawUserErrorsOf(error: unknown): UserErrorRecord[] | null {
  if (!(error instanceof UpstreamError) || error.upstream.name !== 'gitlab') return null;
  const status = error.upstream.status;
  if (status === 400) return fromBadRequest(error.body);
  const code = status === null ? undefined : STATUS_CODES[status];
  if (!code) return null;
  const body = error.body;
  // A 409 (a fork or create whose name is taken) and a 422 can hold the same validation map as a 400.
  if ((status === 409 || status === 422) && body && typeof body === 'object' && typeof (body as Record<string, unknown>).message === 'object') {
    return fromBadRequest(body).map((e) => (status === 409 && e.code === 'INVALID' ? { ...e, code: 'CONFLICT' } : e));
  }
  return [{ message: upstreamMessage(body) ?? `GitLab answered ${status}.`, field: [], code }];
}
