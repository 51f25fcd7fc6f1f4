/** Builds the schema: imports every domain file, then asks the builder for it. */
import { printSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLSchema } from 'graphql';
import { builder } from './builder.js';
import { resolveNodeIdsSynchronously } from './node-ids.js';
import { checkUpstreamValues } from './strict-values.js';
import './scalars.js';
import './gitlab/project.js';
import './gitlab/project-mutations.js';
import './gitlab/job.js';
import './gitlab/pipeline.js';
import './gitlab/hook.js';
import './gitlab/push-rule.js';
import './gitlab/job-subscriptions.js';
import './hubzilla/xchan.js';
import './hubzilla/channel.js';
import './hubzilla/item.js';
import './hubzilla/item-post.js';
import './hubzilla/file.js';
import './hubzilla/album.js';
import './hubzilla/connection.js';
import './hubzilla/group.js';

/** The schema as an Apollo Federation 2 subgraph: every type, plus `_service { sdl }` and `_entities` for the entities' `@key`s. */
export function buildSchema(): GraphQLSchema {
  const schema = builder.toSubGraphSchema({ sortSchema: true, linkUrl: 'https://specs.apollo.dev/federation/v2.6' });
  resolveNodeIdsSynchronously(schema);
  checkUpstreamValues(schema);
  return schema;
}

/** The SDL with its federation directives (`@link`, `@key`), which graphql's printSchema drops. */
export function printSchemaSdl(schema: GraphQLSchema = buildSchema()): string {
  return printSubgraphSchema(schema);
}
