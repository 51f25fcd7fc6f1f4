/**
 * Values an upstream sent, checked against the type their field declares. A
 * value of the wrong type (`"12"` for a count, `"false"` for a flag, a string
 * where an object belongs) fails that field alone with UPSTREAM_ERROR, and its
 * message never repeats the value: graphql-js would coerce `"12"` to 12 and
 * `1` to true, and print any value it refuses.
 */
import { UpstreamError } from '../errors.js';

interface Kinds {
  string: string;
  boolean: boolean;
  number: number;
  object: Record<string, unknown>;
  array: unknown[];
}

const LABELS: Readonly<Record<string, string>> = { gitlab: 'GitLab', hubzilla: 'Hubzilla' };

/** The error of a field whose upstream value has the wrong type. */
export function wrongType(upstream: 'gitlab' | 'hubzilla' = 'gitlab'): UpstreamError {
  return new UpstreamError(`${LABELS[upstream] ?? upstream} sent a value of the wrong type for this field.`, 'UPSTREAM_ERROR', {
    name: upstream,
    status: 200,
    method: 'GET',
    path: '',
  });
}

function isKind(value: unknown, kind: keyof Kinds): boolean {
  switch (kind) {
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
    default:
      return typeof value === kind;
  }
}

/** `value` when it is of `kind`, null when absent; throws wrongType() otherwise. */
export function checked<K extends keyof Kinds>(value: unknown, kind: K, upstream: 'gitlab' | 'hubzilla' = 'gitlab'): Kinds[K] | null {
  if (value === null || value === undefined) return null;
  if (isKind(value, kind)) return value as Kinds[K];
  throw wrongType(upstream);
}
