/**
 * The schema against the last released one (schema/released.graphql): every
 * breaking change is listed, so it is seen before it ships. Dangerous and
 * safe changes are printed only. After a release, copy schema/schema.graphql
 * over schema/released.graphql.
 */
import { readFileSync } from 'node:fs';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { CriticalityLevel, diff, type Change } from '@graphql-inspector/core';
import { isEnumType, isInputObjectType, isInterfaceType, isObjectType, parse, type GraphQLSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { printSchemaSdl } from '../../src/schema/index.js';

const releasedSdl = readFileSync(new URL('../../schema/released.graphql', import.meta.url), 'utf8');

/** A subgraph SDL as a schema: Apollo's builder knows `@link` and `@key`, graphql's does not. */
function fromSdl(sdl: string): GraphQLSchema {
  return buildSubgraphSchema(parse(sdl));
}

function describeChange(change: Change): string {
  return `${change.path ?? ''}: ${change.message}${change.criticality.reason ? ` (${change.criticality.reason})` : ''}`;
}

async function breakingChanges(before: GraphQLSchema, after: GraphQLSchema): Promise<string[]> {
  const changes = await diff(before, after);
  const breaking = changes.filter((c) => c.criticality.level === CriticalityLevel.Breaking).map(describeChange);
  const dangerous = changes.filter((c) => c.criticality.level === CriticalityLevel.Dangerous).map(describeChange);
  if (dangerous.length) console.log(`Dangerous changes since the last release:\n${dangerous.map((c) => `  ${c}`).join('\n')}`);
  if (breaking.length) console.log(`BREAKING changes since the last release:\n${breaking.map((c) => `  ${c}`).join('\n')}`);
  return breaking;
}

/**
 * What a breaking change removed had been deprecated in the released schema
 * (a field, an argument, an input field or an enum value with @deprecated):
 * the one kind of break the policy allows (CONTRIBUTING.md, "Changing the
 * schema"). A retype is never one: it adds the new beside the old instead.
 */
function removedAfterDeprecation(change: Change, released: GraphQLSchema): boolean {
  if (!/_REMOVED$/.test(change.type) || !change.path) return false;
  const [typeName = '', member = '', argument] = change.path.split('.');
  const type = released.getType(typeName);
  if (isEnumType(type)) return Boolean(type.getValue(member)?.deprecationReason);
  if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
    const field = type.getFields()[member];
    if (!field) return false;
    if (argument === undefined) return Boolean(field.deprecationReason);
    return Boolean(('args' in field ? field.args : []).find((a) => a.name === argument)?.deprecationReason);
  }
  return false;
}

/** The breaking changes from `before` to `after` that the deprecation policy refuses. */
async function refusedChanges(before: GraphQLSchema, after: GraphQLSchema, grandfathered: readonly RegExp[] = []): Promise<string[]> {
  const changes = (await diff(before, after)).filter((c) => c.criticality.level === CriticalityLevel.Breaking);
  return changes
    .filter((change) => !removedAfterDeprecation(change, before))
    .map(describeChange)
    .filter((text) => !grandfathered.some((accepted) => accepted.test(text)));
}

/**
 * Breaking changes made before the deprecation policy, since the last
 * release, each on purpose; the list empties at the next release and
 * takes no new entry:
 * - REST ids and byte counts went from Int (32 bits) and Float to SafeInt:
 *   GitLab's job ids are past 2^31, where Int failed every job of gitlab.com.
 *   Numbers in JSON are unchanged.
 * - Job list filters take JobScope, which lacks STARTED: GitLab 17/18 answers
 *   400 to it as a scope.
 * - Project.runnersToken is gone: GitLab gives the runner registration token
 *   to every Maintainer, and it registers machines; no frontend needs it.
 */
const ACCEPTED_BREAKING = [
  /changed (?:type )?from '(?:Int|Float)(!?)' to 'SafeInt\1'/,
  /^(?:Project\.jobs|Project\.pipelineJobs|Pipeline\.jobs)\.statuses: .* changed from '\[JobStatus!\]' to '\[JobScope!\]'/,
  /^Project\.runnersToken: Field 'runnersToken' was removed from object type 'Project'/,
];

describe('schema changes since the last release', () => {
  it('has no breaking change against schema/released.graphql but removals of what was deprecated there', async () => {
    // Both sides built the same way, from their printed SDL, so only the schema's own changes show.
    const released = fromSdl(releasedSdl);
    const current = fromSdl(printSchemaSdl());
    await breakingChanges(released, current);
    expect(await refusedChanges(released, current, ACCEPTED_BREAKING)).toEqual([]);
  });

  it('refuses a removal or a retype without a deprecation period, and lets a deprecated field, argument or value go', async () => {
    const before = fromSdl(`
      enum Color { RED GREEN @deprecated(reason: "Use RED.") BLUE }
      type Query {
        old: String @deprecated(reason: "Use new.")
        kept: String
        retyped: Int
        list(first: Int, page: Int @deprecated(reason: "Use first.")): [String]
        color: Color
      }`);
    const after = fromSdl(`
      enum Color { RED }
      type Query { kept2: String retyped: String list(first: Int): [String] color: Color }`);
    const refused = await refusedChanges(before, after);
    expect(refused.join('\n')).toMatch(/Query\.kept\b/);
    expect(refused.join('\n')).toMatch(/Query\.retyped/);
    expect(refused.join('\n')).toMatch(/Color\.BLUE|BLUE/);
    expect(refused.join('\n')).not.toMatch(/Query\.old\b|Query\.list\.page|GREEN/);
  });

  it('lists a removed field and a newly required argument as breaking', async () => {
    const before = fromSdl('type Query { project(id: ID): String  name: String }');
    const after = fromSdl('type Query { project(id: ID!): String }');
    const breaking = await breakingChanges(before, after);
    expect(breaking).toHaveLength(2);
    expect(breaking.join('\n')).toMatch(/Query\.name/);
    expect(breaking.join('\n')).toMatch(/Query\.project\.id/);
  });
});
