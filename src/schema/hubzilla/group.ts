/**
 * Privacy groups and connections: Channel.privacyGroups with their members,
 * Channel.connections (the address book). group_members takes one group
 * per call, so "one batch" means one DataLoader batch: the members of every
 * group asked in a query are requested together, once per distinct group,
 * never twice. Member and connection rows carry their xchan (LEFT-joined,
 * so it may be null): it primes the xchan loader.
 */
import type { ConnectionRecord, GroupMemberRecord, GroupRecord } from '../../upstreams/hubzilla/records.js';
import { builder } from '../builder.js';
import { UPSTREAM_CALL } from '../cost.js';
import type { Context } from '../context.js';
import { Channel, channelLoaders } from './channel.js';
import { Xchan, type XchanModel } from './xchan.js';

interface GroupModel {
  record: GroupRecord;
  channel: string | null;
}

interface MemberModel {
  record: GroupMemberRecord;
  channel: string | null;
}

function xchanOf(record: ConnectionRecord['xchan'], hash: string, ctx: Context): XchanModel | null {
  if (record) {
    ctx.hubzilla.loaders.primeXchan(record);
    return { record };
  }
  return hash ? { hash } : null;
}

export const ChannelConnection = builder.objectRef<ConnectionRecord>('ChannelConnection').implement({
  description: 'A connection of a channel: an entry of its address book (abook) with the connected identity.',
  fields: (t) => ({
    restId: t.field({ type: 'SafeInt', description: 'Numeric id of the address-book entry (`abook_id`).', resolve: (c) => c.abook_id }),
    xchan: t.field({ type: Xchan, nullable: true, description: 'The connected identity.', resolve: (c, _args, ctx) => xchanOf(c.xchan, c.abook_xchan, ctx) }),
    closeness: t.int({ nullable: true, description: 'Closeness from 0 (closest) to 99.', resolve: (c) => c.abook_closeness }),
    createdAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the connection was made.', resolve: (c) => c.abook_created }),
    updatedAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the connection last changed.', resolve: (c) => c.abook_updated }),
    connectedAt: t.field({ type: 'DateTime', nullable: true, description: 'Time of the last successful contact.', resolve: (c) => c.abook_connected }),
    birthday: t.field({ type: 'DateTime', nullable: true, description: 'Birthday of the connection, where shared.', resolve: (c) => c.abook_dob }),
    blocked: t.boolean({ description: 'Indicates the connection is blocked.', resolve: (c) => c.abook_blocked }),
    ignored: t.boolean({ description: 'Indicates the connection is ignored.', resolve: (c) => c.abook_ignored }),
    hidden: t.boolean({ description: 'Indicates the connection is hidden from others.', resolve: (c) => c.abook_hidden }),
    archived: t.boolean({ description: 'Indicates the connection is archived (unreachable).', resolve: (c) => c.abook_archived }),
    pending: t.boolean({ description: 'Indicates a connection request not yet approved.', resolve: (c) => c.abook_pending }),
    unconnected: t.boolean({ description: 'Indicates a one-sided connection.', resolve: (c) => c.abook_unconnected }),
    isSelf: t.boolean({ description: "Indicates the channel's own entry.", resolve: (c) => c.abook_self }),
    feed: t.boolean({ description: 'Indicates an RSS or Atom feed.', resolve: (c) => c.abook_feed }),
    notHere: t.boolean({ description: 'Indicates the connection is not on this hub any more.', resolve: (c) => c.abook_not_here }),
    role: t.string({
      nullable: true,
      description: 'Permission role of the connection, e.g. `social`; null when none is set.',
      resolve: (c) => c.abook_role || null,
    }),
    instance: t.string({
      nullable: true,
      description: 'Hubs the connection was seen on; null when none is recorded.',
      resolve: (c) => c.abook_instance || null,
    }),
  }),
});

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
      resolve: (m) => m.record.connection,
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
  connections: t.field({
    complexity: UPSTREAM_CALL,
    type: [ChannelConnection],
    description: 'Connections of the channel (`abook`), its own entry included.',
    resolve: (c, _args, ctx) => channelLoaders(ctx, c.nickname).connections(),
  }),
}));
