/** Builds the schema: imports every domain file, then asks the builder for it. */
import type { GraphQLSchema } from 'graphql';
import { builder } from './builder.js';
import './scalars.js';
import './gitlab/project.js';
import './gitlab/project-mutations.js';
import './gitlab/job.js';
import './gitlab/hook.js';
import './gitlab/push-rule.js';

export function buildSchema(): GraphQLSchema {
  return builder.toSchema({ sortSchema: true });
}
