/**
 * The schema against the last released one (schema/released.graphql): every
 * breaking change is listed, so it is seen before it ships. Dangerous and
 * safe changes are printed only. After a release, copy schema/schema.graphql
 * over schema/released.graphql.
 */
import { readFileSync } from 'node:fs';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { CriticalityLevel, diff, type Change } from '@graphql-inspector/core';
import { parse, type GraphQLSchema } from 'graphql';
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
 * Breaking changes made on purpose since the last release:
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
  it('has no breaking change against schema/released.graphql but those made on purpose', async () => {
    // Both sides built the same way, from their printed SDL, so only the schema's own changes show.
    const breaking = await breakingChanges(fromSdl(releasedSdl), fromSdl(printSchemaSdl()));
    expect(breaking.filter((change) => !ACCEPTED_BREAKING.some((accepted) => accepted.test(change)))).toEqual([]);
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
