/**
 * Privacy groups: Channel.privacyGroups with their members, and the members
 * of one group by name. group_members takes one group
 * per call, so "one batch" means one DataLoader batch: the members of every
 * group asked in a query are requested together, once per distinct group,
 * never twice. Member and connection rows carry their xchan (LEFT-joined,
 * so it may be null): it primes the xchan loader.
 */
import type { GroupMemberRecord, GroupRecord } from '../../upstreams/hubzilla/records.js';
import { builder } from '../builder.js';
import { UPSTREAM_CALL } from '../cost.js';
import { Channel, channelLoaders } from './channel.js';
import { ChannelConnection, xchanOf } from './connection.js';
import { Xchan } from './xchan.js';

interface GroupModel {
  record: GroupRecord;
  channel: string | null;
}

interface MemberModel {
  record: GroupMemberRecord;
  channel: string | null;
}

export const PrivacyGroupMember = builder.objectRef<MemberModel>('PrivacyGroupMember').implement({
  description: 'A member of a privacy group.',
  fields: (t) => ({
    restId: t.field({ type: 'SafeInt', description: 'Numeric id of the membership.', resolve: (m) => m.record.id }),
    groupRestId: t.field({ type: 'SafeInt', description: 'Numeric id of the group.', resolve: (m) => m.record.gid }),
    xchanHash: t.string({ description: "Hash of the member's identity.", resolve: (m) => m.record.xchan_hash }),
    xchan: t.field({
      type: Xchan,
      nullable: true,
      description: "The member's identity.",
      resolve: (m, _args, ctx) => xchanOf(m.record.xchan, m.record.xchan_hash, ctx),
    }),
    connection: t.field({
      type: ChannelConnection,
      nullable: true,
      description: "The member's address-book entry; null when the member is not a connection.",
      resolve: (m) => (m.record.connection ? { record: m.record.connection, channel: m.channel } : null),
    }),
  }),
});

export const PrivacyGroup = builder.objectRef<GroupModel>('PrivacyGroup').implement({
  description: 'A privacy group of a channel: a named set of identities for access control.',
  fields: (t) => ({
    restId: t.field({ type: 'SafeInt', description: 'Numeric id of the group.', resolve: (g) => g.record.id }),
    hash: t.string({ description: 'Hash of the group (a UUID), used in ACLs.', resolve: (g) => g.record.hash }),
    name: t.string({ description: 'Name of the group.', resolve: (g) => g.record.gname }),
    visible: t.boolean({ description: 'Indicates members can see the group.', resolve: (g) => g.record.visible }),
    deleted: t.boolean({ description: 'Indicates the group was deleted (the hub still lists it).', resolve: (g) => g.record.deleted }),
    members: t.field({
      complexity: UPSTREAM_CALL,
      type: [PrivacyGroupMember],
      description: 'Members of the group (`group_members`), loaded in one batch for every group asked.',
      resolve: async (g, _args, ctx) => ((await channelLoaders(ctx, g.channel).members(g.record.id)) ?? []).map((record) => ({ record, channel: g.channel })),
    }),
  }),
});

builder.objectFields(Channel, (t) => ({
  privacyGroups: t.field({
    complexity: UPSTREAM_CALL,
    type: [PrivacyGroup],
    description: 'Privacy groups of the channel (`group`), deleted ones included unless excluded.',
    args: { includeDeleted: t.arg.boolean({ defaultValue: true, description: 'Includes groups marked deleted (the hub lists them).' }) },
    resolve: async (c, args, ctx) =>
      (await channelLoaders(ctx, c.nickname).groups())
        .filter((g) => args.includeDeleted !== false || !g.deleted)
        .map((record) => ({ record, channel: c.nickname })),
  }),
  privacyGroupMembers: t.field({
    complexity: UPSTREAM_CALL,
    type: [PrivacyGroupMember],
    nullable: true,
    description: 'Members of the privacy group of this exact name (`group_members?group_name=`), in one call; null when the channel has no such group.',
    args: { name: t.arg.string({ required: true, description: 'Name of the group, as `PrivacyGroup.name` gives it.' }) },
    resolve: async (c, args, ctx) => {
      const members = await channelLoaders(ctx, c.nickname).membersByName(args.name);
      return members?.map((record) => ({ record, channel: c.nickname })) ?? null;
    },
  }),
}));
