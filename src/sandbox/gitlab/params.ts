/**
 * Query parameter coercion the way GitLab's Grape declarations do it: a bad
 * value yields 400 `{"error":"<name> is invalid"}` for a type error and
 * `{"error":"<name> does not have a valid value"}` for a value outside the
 * allowed set; several errors are joined with ", ". Rack keeps the last of
 * repeated scalar values; an empty value counts as absent.
 */
import type { JsonResponse } from '../http-util.js';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE, type PageRequest } from './pagination.js';

// dry-types Params::Bool, which Grape uses for Boolean parameters.
const TRUE_VALUES = new Set(['1', 'on', 't', 'true', 'y', 'yes']);
const FALSE_VALUES = new Set(['0', 'off', 'f', 'false', 'n', 'no']);

/** Reads typed parameters and collects Grape-style validation errors. */
export class Params {
  private readonly errors: string[] = [];

  constructor(readonly query: Record<string, string[]>) {}

  /** The last value of a parameter, or undefined when absent or empty. */
  string(name: string): string | undefined {
    const values = this.query[name];
    const value = values?.[values.length - 1];
    return value === undefined || value === '' ? undefined : value;
  }

  boolean(name: string): boolean | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    const value = raw.toLowerCase();
    if (TRUE_VALUES.has(value)) return true;
    if (FALSE_VALUES.has(value)) return false;
    this.errors.push(`${name} is invalid`);
    return undefined;
  }

  integer(name: string): number | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    if (!/^[+-]?\d+$/.test(raw.trim())) {
      this.errors.push(`${name} is invalid`);
      return undefined;
    }
    return Number(raw.trim());
  }

  oneOf<T extends string>(name: string, values: readonly T[]): T | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    if ((values as readonly string[]).includes(raw)) return raw as T;
    this.errors.push(`${name} does not have a valid value`);
    return undefined;
  }

  integerOneOf(name: string, values: readonly number[]): number | undefined {
    const value = this.integer(name);
    if (value === undefined) return undefined;
    if (values.includes(value)) return value;
    this.errors.push(`${name} does not have a valid value`);
    return undefined;
  }

  /** Whether the parameter was sent at all (an empty value counts: it clears a string attribute). */
  has(name: string): boolean {
    return this.query[name] !== undefined || this.query[`${name}[]`] !== undefined;
  }

  /** The last value as sent, empty string included; undefined when absent. */
  raw(name: string): string | undefined {
    const values = this.query[name];
    return values?.[values.length - 1];
  }

  /**
   * An Array[String] parameter: `name[]=a&name[]=b` (or a JSON array), else
   * `name=a,b` split on commas as GitLab's CommaSeparatedToArray coercion does.
   */
  array(name: string): string[] | undefined {
    const values = this.query[`${name}[]`];
    if (values !== undefined) return values.filter((value) => value !== '');
    const raw = this.raw(name);
    if (raw === undefined) return undefined;
    return raw
      .split(',')
      .map((value) => value.trim())
      .filter((value) => value !== '');
  }

  /** A Date parameter (YYYY-MM-DD). */
  date(name: string): string | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    if (!/^\d{4}-\d{2}-\d{2}$/.test(raw) || Number.isNaN(Date.parse(`${raw}T00:00:00Z`))) {
      this.errors.push(`${name} is invalid`);
      return undefined;
    }
    return raw;
  }

  /** Records "<name> is invalid" (a type error found outside the typed readers, e.g. a File sent as text). */
  invalid(name: string): void {
    this.errors.push(`${name} is invalid`);
  }

  /** `requires :name`: records "<name> is missing" when absent or empty. */
  require(name: string): void {
    if (this.string(name) === undefined && this.query[`${name}[]`] === undefined) this.errors.push(`${name} is missing`);
  }

  /** `at_least_one_of`: records Grape's message when none of `names` was sent. */
  atLeastOneOf(names: readonly string[]): void {
    if (!names.some((name) => this.has(name))) this.errors.push(`${names.join(', ')} are missing, at least one parameter must be provided`);
  }

  /** `page` (default 1, below 1 becomes 1) and `per_page` (default 20, capped at 100, below 1 becomes 20). */
  page(): PageRequest {
    const page = this.integer('page') ?? 1;
    const perPage = this.integer('per_page') ?? DEFAULT_PER_PAGE;
    return { page: Math.max(page, 1), perPage: perPage < 1 ? DEFAULT_PER_PAGE : Math.min(perPage, MAX_PER_PAGE) };
  }

  /** The 400 response for the errors collected so far, or null when there are none. */
  failure(): JsonResponse | null {
    return this.errors.length === 0 ? null : { status: 400, body: { error: this.errors.join(', ') } };
  }
}
