/**
 * `npm run codegen`: prints the schema built from src/schema to
 * schema/schema.graphql (with its federation directives, which graphql's
 * printSchema would drop), the same without federation to schema/client.graphql
 * (what Relay's compiler and client code generators read: they do not know
 * `extend schema @link`, and no client calls the router's `_entities` and
 * `_service`), and typed documents for test/operations/*.graphql
 * (the README's examples among them) to test/operations/generated/. A
 * document the schema no longer accepts fails codegen and the typecheck; a
 * test fails when a committed file drifts.
 */
import type { CodegenConfig } from '@graphql-codegen/cli';
import { MapperKind, mapSchema } from '@graphql-tools/utils';
import { GraphQLObjectType, type GraphQLSchema, printSchema } from 'graphql';
import { buildSchema, printSchemaSdl } from './src/schema/index.js';

const schema = buildSchema();

/** The types and root fields a federation router uses and a client never does. */
const FEDERATION_TYPES = new Set(['_Any', '_Entity', '_Service']);
const FEDERATION_FIELDS = new Set(['_entities', '_service']);

/** The schema as a client sees it: without what only a federation router calls. */
function clientSchema(full: GraphQLSchema): GraphQLSchema {
  return mapSchema(full, {
    [MapperKind.TYPE]: (type) => (FEDERATION_TYPES.has(type.name) ? null : type),
    [MapperKind.QUERY]: (type) => {
      const config = type.toConfig();
      return new GraphQLObjectType({ ...config, fields: Object.fromEntries(Object.entries(config.fields).filter(([name]) => !FEDERATION_FIELDS.has(name))) });
    },
  });
}

const config: CodegenConfig = {
  schema: printSchema(schema),
  emitLegacyCommonJSImports: false,
  generates: {
    'schema/schema.graphql': { plugins: [{ add: { content: printSchemaSdl(schema) } }] },
    'schema/client.graphql': { plugins: [{ add: { content: printSchema(clientSchema(schema)) } }] },
    'test/operations/generated/': {
      preset: 'client',
      documents: ['test/operations/*.graphql'],
      presetConfig: { fragmentMasking: false, gqlTagName: 'graphql' },
      config: { useTypeImports: true, enumsAsTypes: true, scalars: { SafeInt: 'number', DateTime: 'string', File: 'File', JSON: 'unknown', _Any: 'unknown' } },
    },
  },
  silent: true,
};

export default config;
