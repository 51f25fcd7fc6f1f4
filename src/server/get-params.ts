/**
 * GET /graphql with `variables` or `extensions` that are not JSON: the
 * caller's mistake, a 400 that names the parameter (Yoga's parser throws a
 * SyntaxError there, which would be a 500).
 */
import { createGraphQLError, type Plugin } from 'graphql-yoga';

export function useGetParameterChecks(): Plugin {
  return {
    onRequestParse({ request, url }) {
      if (request.method !== 'GET') return;
      for (const name of ['variables', 'extensions']) {
        const value = url.searchParams.get(name);
        if (value === null) continue;
        try {
          JSON.parse(value);
        } catch {
          throw createGraphQLError(`The "${name}" parameter is not JSON.`, { extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } } });
        }
      }
    },
  };
}
