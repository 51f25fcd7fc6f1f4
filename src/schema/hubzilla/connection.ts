/**
 * Connections: Channel.connections (the address book, `abook`), what each
 * connection may do (`abconfig`, decoded, and `perm_allowed`), and
 * Channel.permissionAllowed for any identity. Connection rows carry their
 * xchan (LEFT-joined, so it may be null): it primes the xchan loader.
 */
import { checkXchanValue } from '../../upstreams/hubzilla/client.js';
import { SECRET_KEY } from '../../upstreams/hubzilla/normalise.js';
import { decodePermissions, PERMISSIONS, type Permission, type PermissionSet, permissionSetOf } from '../../upstreams/hubzilla/permissions.js';
import type { ConnectionRecord, ConnectionSettingRecord } from '../../upstreams/hubzilla/records.js';
import { builder } from '../builder.js';
import { UPSTREAM_CALL } from '../cost.js';
import type { Context } from '../context.js';
import { Channel, channelLoaders } from './channel.js';
import { Xchan, type XchanModel } from './xchan.js';

/** A connection with the channel it belongs to. */
export interface ConnectionModel {
  record: ConnectionRecord;
  channel: string | null;
}

/** The xchan of a joined row (priming the loader), or a lazy one by hash. */
export function xchanOf(record: ConnectionRecord['xchan'], hash: string, ctx: Context): XchanModel | null {
  if (record) {
    ctx.hubzilla.loaders.primeXchan(record);
    return { record };
  }
  return hash ? { hash } : null;
}

async function settingsOf(c: ConnectionModel, ctx: Context): Promise<ConnectionSettingRecord[]> {
  return (await channelLoaders(ctx, c.channel).connectionSettings()).get(c.record.abook_xchan) ?? [];
}

/** `view_stream` -> `viewStream`. */
function camel(perm: string): string {
  return perm.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
}

const PERMISSION_TEXT: Readonly<Record<Permission, string>> = {
  view_stream: 'view the stream and posts',
  send_stream: 'send their stream and posts',
  view_profile: 'view the default profile',
  view_contacts: 'view the connections',
  view_storage: 'view the file storage and photos',
  write_storage: 'upload and change files and photos',
  view_pages: 'view the web pages',
  view_wiki: 'view the wikis',
  write_pages: 'edit the web pages',
  write_wiki: 'edit the wikis',
  post_wall: 'post on the channel page (wall)',
  post_comments: 'comment on posts',
  post_mail: 'send private mail',
  post_like: 'like posts and profiles',
  chat: 'chat',
  republish: 'republish posts',
  delegate: 'administer the channel (delegation)',
};

export const ChannelPermission = builder.enumType('ChannelPermission', {
  description: 'A permission of a Hubzilla channel, as `perm_allowed` names it.',
  values: Object.fromEntries(
    PERMISSIONS.map((perm) => [perm.toUpperCase(), { value: perm, description: `May ${PERMISSION_TEXT[perm]} (\`${perm}\`).` }]),
  ) as Record<Uppercase<Permission>, { value: Permission; description: string }>,
});

export const ChannelPermissions = builder.objectRef<PermissionSet>('ChannelPermissions').implement({
  description: 'A set of channel permissions, one flag each; a flag is null where the hub records nothing for it.',
  fields: (t) =>
    Object.fromEntries(
      PERMISSIONS.map((perm) => [
        camel(perm),
        t.boolean({ nullable: true, description: `May ${PERMISSION_TEXT[perm]} (\`${perm}\`).`, resolve: (set) => set[perm] }),
      ]),
    ),
});

export const ConnectionSetting = builder.objectRef<ConnectionSettingRecord>('ConnectionSetting').implement({
  description: 'One stored setting of a connection (an abconfig row).',
  fields: (t) => ({
    category: t.string({ description: 'Category of the setting, e.g. `my_perms`.', resolve: (s) => s.cat }),
    key: t.string({ description: 'Name of the setting, e.g. `view_stream`.', resolve: (s) => s.k }),
    value: t.string({ description: 'Value of the setting as the hub stores it (text; may be serialized or `json:` data).', resolve: (s) => s.v }),
  }),
});

export const ChannelConnection = builder.objectRef<ConnectionModel>('ChannelConnection').implement({
  description: 'A connection of a channel: an entry of its address book (abook) with the connected identity.',
  fields: (t) => ({
    restId: t.field({ type: 'SafeInt', description: 'Numeric id of the address-book entry (`abook_id`).', resolve: (c) => c.record.abook_id }),
    xchan: t.field({
      type: Xchan,
      nullable: true,
      description: 'The connected identity.',
      resolve: (c, _args, ctx) => xchanOf(c.record.xchan, c.record.abook_xchan, ctx),
    }),
    closeness: t.int({ nullable: true, description: 'Closeness from 0 (closest) to 99.', resolve: (c) => c.record.abook_closeness }),
    createdAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the connection was made.', resolve: (c) => c.record.abook_created }),
    updatedAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the connection last changed.', resolve: (c) => c.record.abook_updated }),
    connectedAt: t.field({ type: 'DateTime', nullable: true, description: 'Time of the last successful contact.', resolve: (c) => c.record.abook_connected }),
    birthday: t.field({ type: 'DateTime', nullable: true, description: 'Birthday of the connection, where shared.', resolve: (c) => c.record.abook_dob }),
    blocked: t.boolean({ description: 'Indicates the connection is blocked.', resolve: (c) => c.record.abook_blocked }),
    ignored: t.boolean({ description: 'Indicates the connection is ignored.', resolve: (c) => c.record.abook_ignored }),
    hidden: t.boolean({ description: 'Indicates the connection is hidden from others.', resolve: (c) => c.record.abook_hidden }),
    archived: t.boolean({ description: 'Indicates the connection is archived (unreachable).', resolve: (c) => c.record.abook_archived }),
    pending: t.boolean({ description: 'Indicates a connection request not yet approved.', resolve: (c) => c.record.abook_pending }),
    unconnected: t.boolean({ description: 'Indicates a one-sided connection.', resolve: (c) => c.record.abook_unconnected }),
    isSelf: t.boolean({ description: "Indicates the channel's own entry.", resolve: (c) => c.record.abook_self }),
    feed: t.boolean({ description: 'Indicates an RSS or Atom feed.', resolve: (c) => c.record.abook_feed }),
    notHere: t.boolean({ description: 'Indicates the connection is not on this hub any more.', resolve: (c) => c.record.abook_not_here }),
    role: t.string({
      nullable: true,
      description: 'Permission role of the connection, e.g. `social`; null when none is set.',
      resolve: (c) => c.record.abook_role || null,
    }),
    instance: t.string({
      nullable: true,
      description: 'Hubs the connection was seen on; null when none is recorded.',
      resolve: (c) => c.record.abook_instance || null,
    }),
    myPermissions: t.field({
      complexity: UPSTREAM_CALL,
      type: ChannelPermissions,
      nullable: true,
      description:
        "What the channel grants this connection, as stored (abconfig `my_perms`; the `abook_my_perms` bits on older hubs). Null when nothing is stored, as for the channel's own entry. One abconfig call serves every connection.",
      resolve: async (c, _args, ctx) => decodePermissions(await settingsOf(c, ctx), 'my_perms', c.record.abook_my_perms),
    }),
    theirPermissions: t.field({
      complexity: UPSTREAM_CALL,
      type: ChannelPermissions,
      nullable: true,
      description:
        'What this connection grants the channel, as its hub reported it (abconfig `their_perms`; the `abook_their_perms` bits on older hubs). Null when nothing is stored.',
      resolve: async (c, _args, ctx) => decodePermissions(await settingsOf(c, ctx), 'their_perms', c.record.abook_their_perms),
    }),
    allowedPermissions: t.field({
      complexity: UPSTREAM_CALL,
      type: ChannelPermissions,
      nullable: true,
      description:
        "What the connection may do on the channel, as the hub decides it (`perm_allowed` by address-book id): the stored grants within the channel's limits, blocks included. One call per connection.",
      resolve: async (c, _args, ctx) => {
        const answer = await channelLoaders(ctx, c.channel).allowed(c.record.abook_id);
        return answer ? permissionSetOf(answer) : null;
      },
    }),
    settings: t.field({
      complexity: UPSTREAM_CALL,
      type: [ConnectionSetting],
      description:
        'Every stored setting of the connection (`abconfig`), permissions among them; settings that name a password, secret or token are left out. One abconfig call serves every connection.',
      resolve: async (c, _args, ctx) => (await settingsOf(c, ctx)).filter((s) => !SECRET_KEY.test(s.k) && !SECRET_KEY.test(s.cat)),
    }),
  }),
});

builder.objectFields(Channel, (t) => ({
  connections: t.field({
    complexity: UPSTREAM_CALL,
    type: [ChannelConnection],
    description: 'Connections of the channel (`abook`), its own entry included.',
    resolve: async (c, _args, ctx) => (await channelLoaders(ctx, c.nickname).connections()).map((record) => ({ record, channel: c.nickname })),
  }),
  permissionAllowed: t.boolean({
    complexity: 2 * UPSTREAM_CALL,
    nullable: true,
    description:
      'Whether the channel grants an identity a permission (`perm_allowed`). A connection is asked by its address-book id, as the hub answers by hash for an unknown observer only; any other identity gets what the channel grants an unknown observer. Null when the hub knows neither.',
    args: {
      xchanHash: t.arg.string({ required: true, description: 'Hash of the identity (`Xchan.hash`).' }),
      permission: t.arg({ type: ChannelPermission, required: true, description: 'The permission to check.' }),
    },
    resolve: async (c, args, ctx) => {
      checkXchanValue('hash', args.xchanHash, 'xchanHash');
      const loaders = channelLoaders(ctx, c.nickname);
      const connection = (await loaders.connections()).find((r) => r.abook_xchan === args.xchanHash);
      const answer = connection ? await loaders.allowed(connection.abook_id) : await loaders.client.allowedPermissions({ hash: args.xchanHash });
      return answer?.get(args.permission) ?? null;
    },
  }),
}));
