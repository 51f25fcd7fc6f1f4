/** Scalars shared by both upstreams. */
import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { GraphQLSafeInt } from 'graphql-scalars';
import { builder } from './builder.js';

const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function parseDateTime(value: unknown): Date {
  const date = typeof value === 'string' ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) throw new GraphQLError('A DateTime must be an ISO 8601 string.');
  return date;
}

builder.scalarType('DateTime', {
  description: 'A timestamp in ISO 8601, always in UTC, e.g. `2026-03-01T12:00:00.000Z`.',
  serialize: (value) => {
    // Most upstream timestamps are already canonical: skip the Date round trip (thousands per list).
    if (typeof value === 'string' && CANONICAL.test(value)) return value;
    const date = value instanceof Date ? value : new Date(String(value));
    if (Number.isNaN(date.getTime())) throw new GraphQLError('The value is not a timestamp.');
    return date.toISOString();
  },
  parseValue: parseDateTime,
  // One argument: graphql's default takes (node, variables), which graphql-jit warns it cannot pass. A DateTime literal is a string, with no variable inside.
  parseLiteral: (node) => parseDateTime(node.kind === Kind.STRING ? node.value : null),
});

builder.scalarType('File', {
  description: 'A file sent with the GraphQL multipart request spec (an input only).',
  serialize: () => {
    throw new GraphQLError('A File is an input only.');
  },
  parseValue: (value) => {
    // Yoga's multipart parser makes its own File class, not a Node Blob: accept anything file-like.
    const file = value as Partial<File> | null;
    if (file && typeof file === 'object' && typeof file.stream === 'function' && typeof file.arrayBuffer === 'function') return value as File;
    throw new GraphQLError('Expected a file sent with the GraphQL multipart request spec.');
  },
  parseLiteral: () => {
    throw new GraphQLError('A File comes as a variable, in a multipart request, never written in the document.');
  },
});

// GitLab job ids passed 2^31 in 2022: every REST id and byte count is a SafeInt, never a 32-bit Int.
builder.addScalarType(
  'SafeInt',
  new GraphQLScalarType({
    ...GraphQLSafeInt.toConfig(),
    // strict-values.ts has checked every upstream value already: a safe integer goes out as it is.
    serialize: (value) => (typeof value === 'number' && Number.isSafeInteger(value) ? value : GraphQLSafeInt.serialize(value)),
    description: 'A whole number from -(2^53-1) to 2^53-1, exact in JSON and JavaScript: REST ids (GitLab job ids are past 2^31) and byte counts.',
  }),
);
