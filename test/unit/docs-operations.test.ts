/**
 * Every GraphQL example in README.md and docs/ is one of the documents in
 * test/operations, from which codegen makes typed documents: a schema change
 * that breaks a documented operation fails codegen's drift test and the typecheck.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parse, print, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { buildSchema } from '../../src/schema/index.js';

const root = new URL('../../', import.meta.url);
const pages = ['README.md', ...readdirSync(new URL('docs/', root)).map((name) => `docs/${name}`)].map((page) => readFileSync(new URL(page, root), 'utf8'));
const examples = pages.flatMap((page) => [...page.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1] ?? ''));
const operationsDir = new URL('test/operations/', root);
const operations = new Map(
  readdirSync(operationsDir)
    .filter((f) => f.endsWith('.graphql'))
    .map((f) => [print(parse(readFileSync(new URL(f, operationsDir), 'utf8'))), f] as const),
);

describe('the GraphQL examples of the docs', () => {
  it('has GraphQL examples', () => {
    expect(examples.length).toBeGreaterThanOrEqual(3);
  });

  it.each(examples.map((e) => [e.split('\n')[0] ?? '', e]))('%s is valid and kept in test/operations', (_, example) => {
    const document = parse(example);
    expect(validate(buildSchema(), document).map((e) => e.message)).toEqual([]);
    expect(operations.get(print(document)), 'add it to test/operations/ and run npm run codegen').toBeDefined();
  });
});
