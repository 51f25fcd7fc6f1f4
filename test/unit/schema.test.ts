import { readFile } from 'node:fs/promises';
import { generate } from '@graphql-codegen/cli';
import { isEnumType, isInputObjectType, isInterfaceType, isIntrospectionType, isObjectType, isSpecifiedScalarType } from 'graphql';
import { describe, expect, it } from 'vitest';
import config from '../../codegen.js';
import { buildSchema } from '../../src/schema/index.js';

describe('schema artefact', () => {
  it('matches the committed schema/schema.graphql and typed documents (run `npm run codegen` after a schema change)', async () => {
    // Also fails when a document in test/operations (the README's examples among them) no longer fits the schema.
    const outputs: { filename: string; content: string }[] = await generate({ ...config, silent: true }, false);
    expect(outputs.map((o) => o.filename).sort()).toEqual([
      'schema/client.graphql',
      'schema/schema.graphql',
      'test/operations/generated/gql.ts',
      'test/operations/generated/graphql.ts',
      'test/operations/generated/index.ts',
    ]);
    for (const output of outputs) {
      const committed = await readFile(new URL(`../../${output.filename}`, import.meta.url), 'utf8');
      expect(committed, output.filename).toBe(output.content);
    }
  });

  it('keeps the federation @key directives in the printed schema', async () => {
    const committed = await readFile(new URL('../../schema/schema.graphql', import.meta.url), 'utf8');
    expect(committed).toContain('@link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])');
    expect(committed.match(/@key\(fields: "[a-z]+"\)/g)).toEqual(['@key(fields: "id")', '@key(fields: "id")', '@key(fields: "id")', '@key(fields: "hash")']);
  });

  it('describes every type, field, argument and enum value', () => {
    const schema = buildSchema();
    const missing: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      // The federation machinery (`_Any`, `_Entity`, `_Service`) is Apollo's, described by its spec.
      if (isIntrospectionType(type) || isSpecifiedScalarType(type) || type.name.startsWith('_')) continue;
      if (!type.description) missing.push(type.name);
      if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
        for (const field of Object.values(type.getFields())) {
          if (field.name.startsWith('_')) continue;
          if (!field.description) missing.push(`${type.name}.${field.name}`);
          for (const arg of 'args' in field ? field.args : []) {
            if (!arg.description) missing.push(`${type.name}.${field.name}(${arg.name})`);
          }
        }
      }
      if (isEnumType(type)) {
        for (const value of type.getValues()) if (!value.description) missing.push(`${type.name}.${value.name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
