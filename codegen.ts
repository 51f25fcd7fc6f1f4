/**
 * `npm run codegen`: prints the schema built from src/schema to
 * schema/schema.graphql (with its federation directives, which graphql's
 * printSchema would drop), the same without them to schema/client.graphql
 * (what Relay's compiler and client code generators read: they do not know
 * `extend schema @link`), and typed documents for test/operations/*.graphql
 * (the README's examples among them) to test/operations/generated/. A
 * document the schema no longer accepts fails codegen and the typecheck; a
 * test fails when a committed file drifts.
 */
import type { CodegenConfig } from '@graphql-codegen/cli';
import { printSchema } from 'graphql';
import { buildSchema, printSchemaSdl } from './src/schema/index.js';

const schema = buildSchema();

const config: CodegenConfig = {
  schema: printSchema(schema),
  emitLegacyCommonJSImports: false,
  generates: {
    'schema/schema.graphql': { plugins: [{ add: { content: printSchemaSdl(schema) } }] },
    'schema/client.graphql': { plugins: [{ add: { content: printSchema(schema) } }] },
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
