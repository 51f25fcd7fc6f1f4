/** GitLab users as they appear inside projects: owners and project members. */
import type { OwnerRecord } from '../../upstreams/gitlab/records.js';
import { builder } from '../builder.js';

export const User = builder.objectRef<OwnerRecord>('User');

User.implement({
  description: 'A GitLab user. Which fields are known depends on where the user appears: a project owner carries only id, name and creation time.',
  fields: (t) => ({
    restId: t.field({ type: 'SafeInt', description: 'Numeric id of the user in the GitLab REST API.', resolve: (u) => u.id }),
    name: t.string({ description: 'Display name of the user.', resolve: (u) => u.name }),
    username: t.string({ nullable: true, description: 'Username of the user.', resolve: (u) => u.username ?? null }),
    state: t.string({ nullable: true, description: 'State of the user account, e.g. `active` or `blocked`.', resolve: (u) => u.state ?? null }),
    avatarUrl: t.string({ nullable: true, description: "URL of the user's avatar.", resolve: (u) => u.avatar_url ?? null }),
    webUrl: t.string({ nullable: true, description: "URL of the user's profile page.", resolve: (u) => u.web_url ?? null }),
    createdAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the user was created.', resolve: (u) => u.created_at ?? null }),
  }),
});

export const UserConnection = builder.connectionObject(
  { type: User, name: 'UserConnection', description: 'A page of users.' },
  { name: 'UserEdge', description: 'A user with its cursor.' },
);
