/**
 * `npm run codegen`: prints the schema built from src/schema to
 * schema/schema.graphql. A test fails when the committed file drifts.
 */
import type { CodegenConfig } from '@graphql-codegen/cli';
import { printSchema } from 'graphql';
import { buildSchema } from './src/schema/index.js';

const config: CodegenConfig = {
  schema: printSchema(buildSchema()),
  generates: {
    'schema/schema.graphql': { plugins: ['schema-ast'], config: { includeDirectives: true, sort: false } },
  },
  silent: true,
};

export default config;
