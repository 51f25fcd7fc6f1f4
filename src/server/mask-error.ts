/**
 * The one place where internal errors become public GraphQL errors: upstream
 * and input errors keep their code and a safe message; anything else is
 * masked as "Unexpected error." in every mode.
 */
import { GraphQLError } from 'graphql';
import { createGraphQLError, maskError as yogaMaskError } from 'graphql-yoga';
import { InputError, UpstreamError } from '../errors.js';

/** What graphql-js and the gateway's scalars say when a value does not serialize. */
const SERIALIZATION = /cannot represent|is not a timestamp/i;
/** What graphql-js and graphql-jit say when a resolver gives null for a non-null field: here, an upstream that left out a value. */
const MISSING = /^Cannot return null for non-nullable field/;

export function maskError(error: unknown, message: string): Error {
  const located = error instanceof GraphQLError ? error : null;
  const original = located?.originalError ?? error;
  const where = { nodes: located?.nodes, source: located?.source, positions: located?.positions, path: located?.path };
  if (original instanceof UpstreamError) {
    return createGraphQLError(original.message, {
      ...where,
      extensions: {
        code: original.code,
        upstream: { ...original.upstream },
        ...(original.mayHaveBeenApplied ? { mayHaveBeenApplied: true, ...(original.retryWith ? { retryWith: { ...original.retryWith } } : {}) } : {}),
      },
    });
  }
  // graphql-jit's own errors carry no extensions at all: read them as graphql-js's, which carry an empty object.
  const ownError = original instanceof GraphQLError && located?.path && original.extensions?.code === undefined;
  // graphql-js prints the value a scalar refuses ("String cannot represent value: { token: ... }"): never pass it on.
  if (ownError && SERIALIZATION.test(original.message)) {
    return createGraphQLError("This field's value has the wrong type and cannot be shown.", { ...where, extensions: { code: 'UPSTREAM_ERROR' } });
  }
  // graphql-js throws it as a plain Error, graphql-jit as a GraphQLError.
  const executorError = ownError || (located?.path && original instanceof Error && original.constructor === Error);
  if (executorError && MISSING.test(original.message)) {
    return createGraphQLError('The upstream sent no value where one is always expected.', { ...where, extensions: { code: 'UPSTREAM_ERROR' } });
  }
  if (original instanceof InputError) {
    return createGraphQLError(original.message, {
      ...where,
      extensions: { code: original.code, field: original.field },
    });
  }
  return yogaMaskError(error, message, false);
}

/** A failure of a subscription's stream itself (multipart, callbacks), said without anything it carried but a GraphQL error's own words. */
export function streamError(error: unknown): unknown {
  if (error instanceof GraphQLError) return error.toJSON();
  return { message: 'The subscription ended with an error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } };
}
