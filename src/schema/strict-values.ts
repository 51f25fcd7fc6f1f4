/**
 * Every value an upstream sent is checked against the type of the field that
 * shows it, before graphql-js serializes it. graphql-js coerces leniently
 * (`"12"` to 12, `1` to true, 42 to "42", a string where an object belongs
 * to an object of nulls) and prints the values it refuses into the message;
 * here a value of the wrong type fails its own field with UPSTREAM_ERROR and
 * a fixed message, and the rest of the record still arrives.
 *
 * Done once over the built schema, like node-ids.ts, so a field added later
 * is checked without anything to remember.
 */
import {
  defaultFieldResolver,
  getNamedType,
  getNullableType,
  isEnumType,
  isInterfaceType,
  isListType,
  isObjectType,
  isScalarType,
  isUnionType,
  type GraphQLField,
  type GraphQLFieldResolver,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';
import { wrongType } from './upstream-values.js';

type Check = (value: unknown) => boolean;

const SCALAR_CHECKS: Readonly<Record<string, Check>> = {
  String: (v) => typeof v === 'string',
  Boolean: (v) => typeof v === 'boolean',
  Int: (v) => Number.isInteger(v) && (v as number) >= -(2 ** 31) && (v as number) < 2 ** 31,
  Float: (v) => typeof v === 'number' && Number.isFinite(v),
  SafeInt: (v) => Number.isSafeInteger(v),
  DateTime: (v) => v instanceof Date || (typeof v === 'string' && !Number.isNaN(Date.parse(v))),
};

const isObjectValue: Check = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The check for a value of `type`, or null where the gateway made the value itself (enums, ids, JSON). */
function checkFor(type: GraphQLOutputType): Check | null {
  const nullable = getNullableType(type);
  if (isListType(nullable)) {
    const item = checkFor(nullable.ofType);
    return (v) => Array.isArray(v) && (item === null || v.every((i) => i === null || i === undefined || item(i)));
  }
  if (isScalarType(nullable)) return SCALAR_CHECKS[nullable.name] ?? null;
  if (isEnumType(nullable)) return null;
  return isObjectValue;
}

/** Types whose fields show the gateway's own values, not an upstream's: roots, payloads, pages and errors. */
function ownValues(name: string, schema: GraphQLSchema): boolean {
  const roots = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].map((t) => t?.name);
  return roots.includes(name) || name.startsWith('_') || /(Payload|Connection|Edge)$/.test(name) || name === 'PageInfo' || name === 'UserError';
}

/** Object types reachable from the Hubzilla entry points: their values come from Hubzilla. */
function hubzillaTypes(schema: GraphQLSchema): Set<string> {
  const seen = new Set<string>();
  const query = schema.getQueryType()?.getFields() ?? {};
  const queue = ['channel', 'xchan'].flatMap((name) => (query[name] ? [getNamedType(query[name].type).name] : []));
  while (queue.length) {
    const name = queue.pop() ?? '';
    const type = schema.getType(name);
    if (seen.has(name) || !(isObjectType(type) || isInterfaceType(type) || isUnionType(type))) continue;
    seen.add(name);
    if (isUnionType(type)) queue.push(...type.getTypes().map((t) => t.name));
    else for (const field of Object.values(type.getFields())) queue.push(getNamedType(field.type).name);
  }
  return seen;
}

/**
 * The field's resolver with the check after it. Lists of 2,000 jobs run this
 * for every field of every job: a field that reads a property of the same
 * name (Pothos `expose`, graphql's default) reads it here directly, and
 * only objects are asked whether they are promises.
 */
function checked(field: GraphQLField<unknown, unknown>, check: Check, upstream: 'gitlab' | 'hubzilla'): GraphQLFieldResolver<unknown, unknown> {
  const verify = (value: unknown): unknown => {
    if (value === null || value === undefined || check(value)) return value;
    throw wrongType(upstream);
  };
  if (field.resolve === undefined || field.resolve === defaultFieldResolver) {
    const key = field.name;
    return (parent) => verify((parent as Record<string, unknown>)[key]);
  }
  const resolve = field.resolve ?? defaultFieldResolver;
  return (parent, args, context, info) => {
    const value = resolve(parent, args, context, info);
    if (typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function') {
      return (value as Promise<unknown>).then(verify);
    }
    return verify(value);
  };
}

/** Wraps the resolver of every field that shows an upstream value; returns how many it wrapped. */
export function checkUpstreamValues(schema: GraphQLSchema): number {
  const hubzilla = hubzillaTypes(schema);
  let wrapped = 0;
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__') || ownValues(type.name, schema)) continue;
    for (const field of Object.values(type.getFields())) {
      // Ids are built by the gateway (node-ids.ts), and a field with arguments computes its value.
      if (field.name === 'id' || field.args.length > 0) continue;
      const check = checkFor(field.type);
      if (!check) continue;
      field.resolve = checked(field, check, hubzilla.has(type.name) ? 'hubzilla' : 'gitlab');
      wrapped++;
    }
  }
  return wrapped;
}
