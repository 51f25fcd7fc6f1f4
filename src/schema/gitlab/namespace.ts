/** The namespace (user or group) a project lives in. */
import type { NamespaceRecord } from '../../upstreams/gitlab/records.js';
import { builder } from '../builder.js';

export const Namespace = builder.objectRef<NamespaceRecord>('Namespace');

Namespace.implement({
  description: 'A user or group namespace that holds projects.',
  fields: (t) => ({
    restId: t.field({ type: 'SafeInt', description: 'Numeric id of the namespace in the GitLab REST API.', resolve: (n) => n.id }),
    name: t.string({ description: 'Name of the namespace.', resolve: (n) => n.name }),
    path: t.string({ description: 'Path of the namespace, the last segment of its full path.', resolve: (n) => n.path }),
    kind: t.string({ description: 'Kind of the namespace: `user` or `group`.', resolve: (n) => n.kind }),
    fullPath: t.string({ description: 'Full path of the namespace, e.g. `group/subgroup`.', resolve: (n) => n.full_path }),
    parentId: t.field({
      type: 'SafeInt',
      nullable: true,
      description: 'Numeric id of the parent group; null for a top-level namespace.',
      resolve: (n) => n.parent_id ?? null,
    }),
    avatarUrl: t.string({ nullable: true, description: "URL of the namespace's avatar.", resolve: (n) => n.avatar_url ?? null }),
    webUrl: t.string({ nullable: true, description: "URL of the namespace's page.", resolve: (n) => n.web_url ?? null }),
  }),
});
