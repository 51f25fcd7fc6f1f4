/**
 * The one place where internal errors become public GraphQL errors: upstream
 * and input errors keep their code and a safe message; anything else is
 * masked as "Unexpected error." in every mode.
 */
import { GraphQLError } from 'graphql';
import { createGraphQLError, maskError as yogaMaskError } from 'graphql-yoga';
import { InputError, UpstreamError } from '../errors.js';

export function maskError(error: unknown, message: string): Error {
  const located = error instanceof GraphQLError ? error : null;
  const original = located?.originalError ?? error;
  const where = { nodes: located?.nodes, source: located?.source, positions: located?.positions, path: located?.path };
  if (original instanceof UpstreamError) {
    return createGraphQLError(original.message, {
      ...where,
      extensions: { code: original.code, upstream: { ...original.upstream } },
    });
  }
  if (original instanceof InputError) {
    return createGraphQLError(original.message, {
      ...where,
      extensions: { code: original.code, field: original.field },
    });
  }
  return yogaMaskError(error, message, false);
}
