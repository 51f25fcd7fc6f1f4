/**
 * The cost model of @pothos/plugin-complexity, in upstream calls: an
 * operation's complexity is an upper bound of the REST calls it can cause,
 * computed from its shape and arguments before anything runs (the server's
 * cost limit, MAX_COST, refuses it above the limit).
 *
 * - A field that makes its own call says `complexity: UPSTREAM_CALL`.
 * - A connection costs the page calls its window needs (1 from the start of
 *   the list, 2 after a cursor, 3 for `last` without `before`) and multiplies
 *   its selection by its page size (`first`, `last`, or DEFAULT_PAGE_SIZE).
 * - A mutation (one `input` argument) costs 2: the write and the read that
 *   fills its payload.
 * - `node` costs 1 and `nodes` one per id; other lists multiply their
 *   selection by LIST_ESTIMATE; every other field costs nothing (its value is
 *   in the parent's record).
 *
 * Not counted: the one full read that fills the fields a list form lacks
 * (Project, Xchan), because it is at most one call per object however many
 * such fields are selected, and DataLoader de-duplication (the bound may
 * overshoot, never the other way for what is counted).
 */
import { getNamedType, getNullableType, isListType, type GraphQLField } from 'graphql';
import type { FieldComplexityValue } from '@pothos/plugin-complexity';
import { MAX_PAGE_SIZE, type WindowArgs } from '../upstreams/pagination.js';

/** The complexity of a field that makes one upstream call. */
export const UPSTREAM_CALL = 1;

/** Items assumed in a list that is not a connection (albums, groups, members, comments...). */
export const LIST_ESTIMATE = 20;

const FALLBACK_PAGE_SIZE = 20;

function pageSize(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? Math.min(MAX_PAGE_SIZE, Math.max(0, Math.trunc(value))) : null;
}

/** Page calls and page size of a connection window (the arguments are checked later, at resolve time). */
export function connectionCost(args: WindowArgs, defaultPageSize: number): { field: number; multiplier: number } {
  const size = pageSize(args.first) ?? pageSize(args.last) ?? defaultPageSize;
  let calls = 1;
  if (args.after || args.before) calls = 2;
  if (args.last !== null && args.last !== undefined && !args.before) calls = 3;
  return { field: calls, multiplier: size };
}

// biome-ignore lint/suspicious/noExplicitAny: any context: the plugin passes the schema's own.
type AnyField = GraphQLField<unknown, any, any>;

function isConnection(field: AnyField): boolean {
  return getNamedType(field.type).name.endsWith('Connection') && field.args.some((arg) => arg.name === 'first');
}

/** The default complexity of every field without its own `complexity` option. */
export function fieldComplexity(args: Record<string, unknown>, ctx: { defaultPageSize?: number } | undefined, field: AnyField): FieldComplexityValue {
  if (isConnection(field)) return connectionCost(args as WindowArgs, ctx?.defaultPageSize ?? FALLBACK_PAGE_SIZE);
  if (field.name === 'node' && field.args.length === 1 && field.args[0]?.name === 'id') return UPSTREAM_CALL;
  if (field.name === 'nodes' && Array.isArray(args.ids)) return { field: args.ids.length, multiplier: args.ids.length };
  if (isListType(getNullableType(field.type))) {
    // A connection's own edges and nodes: the connection already multiplied by its page size.
    if ((field.name === 'edges' || field.name === 'nodes') && field.args.length === 0) return { field: 0, multiplier: 1 };
    return { field: 0, multiplier: LIST_ESTIMATE };
  }
  if (field.args.length === 1 && field.args[0]?.name === 'input') return 2;
  return 0;
}
