import { readFile } from 'node:fs/promises';
import { generate } from '@graphql-codegen/cli';
import {
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isIntrospectionType,
  isObjectType,
  isSpecifiedScalarType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import config from '../../codegen.js';
import { buildSchema } from '../../src/schema/index.js';

describe('schema artefact', () => {
  it('matches the committed schema/schema.graphql (run `npm run codegen` after a schema change)', async () => {
    const [output] = await generate({ ...config, silent: true }, false);
    const committed = await readFile(new URL('../../schema/schema.graphql', import.meta.url), 'utf8');
    expect(output?.filename).toBe('schema/schema.graphql');
    expect(committed).toBe(output?.content);
  });

  it('describes every type, field, argument and enum value', () => {
    const schema = buildSchema();
    const missing: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (isIntrospectionType(type) || isSpecifiedScalarType(type)) continue;
      if (!type.description) missing.push(type.name);
      if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
        for (const field of Object.values(type.getFields())) {
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
