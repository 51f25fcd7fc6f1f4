/**
 * Pothos serves every Node's `id` through an async wrapper: a promise per
 * node, so a list of 2,000 jobs costs 2,000 promises and makes the compiled
 * executor finish each item asynchronously. Every `id` resolver here is
 * synchronous but one (it reads the record), so the wrapper is replaced by a
 * function that encodes the same global id, and awaits only when it must.
 */
import { recordNodeTypes } from './global-id.js';
import { isObjectType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { encodeGlobalId } from './global-id.js';

type LocalIdResolver = GraphQLFieldResolver<unknown, unknown, unknown, string | number | bigint | Promise<string | number | bigint>>;

function localIdResolver(options: unknown): LocalIdResolver | null {
  const id = (options as { id?: { resolve?: unknown } } | undefined)?.id;
  return typeof id?.resolve === 'function' ? (id.resolve as LocalIdResolver) : null;
}

/** Makes the `id` of every Node type resolve synchronously; returns how many types it changed. */
export function resolveNodeIdsSynchronously(schema: GraphQLSchema): number {
  let changed = 0;
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || !type.getInterfaces().some((i) => i.name === 'Node')) continue;
    recordNodeTypes([type.name]);
    const localId = localIdResolver(type.extensions.pothosOptions);
    const field = type.getFields().id;
    if (!localId || !field) continue;
    const typename = type.name;
    const resolve: GraphQLFieldResolver<unknown, unknown> = (parent, args, context, info) => {
      const id = localId(parent, args, context, info);
      // An id that needs a lookup (an xchan known by summary only) stays asynchronous.
      return isPromise(id) ? id.then((value) => encodeGlobalId(typename, value)) : encodeGlobalId(typename, id);
    };
    field.resolve = resolve;
    changed++;
  }
  return changed;
}

function isPromise(value: unknown): value is Promise<string | number | bigint> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
