/** Builds the schema: imports every domain file, then asks the builder for it. */
import type { GraphQLSchema } from 'graphql';
import { builder } from './builder.js';
import './scalars.js';
import './gitlab/project.js';
import './gitlab/project-mutations.js';
import './gitlab/job.js';
import './gitlab/hook.js';
import './gitlab/push-rule.js';
import './gitlab/job-subscriptions.js';
import './hubzilla/xchan.js';
import './hubzilla/channel.js';
import './hubzilla/item.js';
import './hubzilla/file.js';
import './hubzilla/album.js';
import './hubzilla/group.js';

export function buildSchema(): GraphQLSchema {
  return builder.toSchema({ sortSchema: true });
}
