/**
 * The Hubzilla channel: `Query.channel(nickname)`, the entry point to a
 * channel's items, files, albums, privacy groups and connections, and its
 * export. A login (nickname or account email) acts on its default channel;
 * `nickname` picks another channel of the same account, sent as the hub's
 * `channel=` parameter on every call.
 */
import { GraphQLError } from 'graphql';
import { checkNickname } from '../../upstreams/hubzilla/client.js';
import type { ChannelLoaders } from '../../upstreams/hubzilla/loaders.js';
import { builder } from '../builder.js';
import { UPSTREAM_CALL } from '../cost.js';
import type { Context } from '../context.js';
import { Xchan } from './xchan.js';

/** A channel as the schema carries it: its nickname, or null for the login's default channel. */
export interface ChannelModel {
  nickname: string | null;
}

export const Channel = builder.objectRef<ChannelModel>('Channel');

/** The loaders of the channel a model belongs to. */
export function channelLoaders(ctx: Context, channel: string | null): ChannelLoaders {
  return ctx.hubzilla.loaders.channel(channel);
}

/**
 * A local id scoped to its channel (`nick!local`), so a global id finds the
 * same channel again; unprefixed for the login's default channel. `!` cannot
 * occur in a nickname, and a message id (a URL) has `:` before any `!`.
 */
export function scopedId(channel: string | null, local: string | number): string {
  return channel ? `${channel}!${local}` : String(local);
}

/** Splits a scoped id into its channel (null: the default) and local part. */
export function parseScopedId(id: string): { channel: string | null; local: string } {
  const match = /^([A-Za-z0-9][A-Za-z0-9._-]{0,63})!(.*)$/s.exec(id);
  return match ? { channel: match[1] ?? null, local: match[2] ?? '' } : { channel: null, local: id };
}

builder.scalarType('JSON', {
  description: 'Unstructured JSON, used only for the channel export, whose shape Hubzilla does not fix.',
  serialize: (value) => value,
  parseValue: () => {
    throw new GraphQLError('JSON is an output only.');
  },
  parseLiteral: () => {
    throw new GraphQLError('JSON is an output only.');
  },
});

export const ExportSection = builder.enumType('ExportSection', {
  description: 'A section of the channel export (`channel/export/basic?sections=`).',
  values: {
    CHANNEL: { value: 'channel', description: 'The channel row and its permission limits (keys and passwords removed).' },
    PROFILE: { value: 'profile', description: 'Profiles and the profile photo.' },
    CONNECTIONS: { value: 'connections', description: 'Address book, xchans, hub locations, privacy groups and their members.' },
    CONFIG: { value: 'config', description: 'Channel settings (pconfig), apps and terms; secret settings removed.' },
    APPS: { value: 'apps', description: 'Installed apps.' },
    CHATROOMS: { value: 'chatrooms', description: 'Chat rooms.' },
    EVENTS: { value: 'events', description: 'Calendar events.' },
    WEBPAGES: { value: 'webpages', description: 'Web pages, menus and layouts.' },
    WIKIS: { value: 'wikis', description: 'Wikis.' },
    ITEMS: { value: 'items', description: 'Wall posts of the last month.' },
  } as const,
});

/** A channel of the caller's account by nickname, matched without regard to case as the hub does; null when the account has none. */
async function accountChannel(ctx: Context, nickname: string): Promise<ChannelModel | null> {
  // Not a nickname at all: the caller's mistake, before any call.
  const found = await accountNickname(ctx, checkNickname(nickname));
  return found === null ? null : { nickname: found };
}

/**
 * A nickname as the caller's account spells it (the hub matches without regard
 * to case); null when the account has no such channel. The hub answers calls
 * for another account's channel with empty 200s: membership is checked once,
 * with channel/list.
 */
export async function accountNickname(ctx: Context, nickname: string): Promise<string | null> {
  const asked = nickname.toLowerCase();
  const channels = await ctx.hubzilla.loaders.channelList();
  return channels.find((channel) => channel.toLowerCase() === asked) ?? null;
}

builder.node(Channel, {
  description:
    "A Hubzilla channel of the caller's account: its stream, files, photo albums, privacy groups and connections. A Node, so a fragment paging its stream or files can be refetched by its id (`gid://duograph/Channel/<nickname>`).",
  // The login's default channel is known by nickname only once its info is read (one call, shared with its other fields).
  id: { resolve: async (c, _args, ctx) => c.nickname ?? (await channelLoaders(ctx, null).info())?.channel_address ?? '' },
  loadOne: (id, ctx) => accountChannel(ctx, id),
  fields: (t) => ({
    nickname: t.string({
      description: 'Nickname of the channel (`channel_address`), e.g. `demo`.',
      resolve: async (c, _args, ctx) => c.nickname ?? (await channelLoaders(ctx, null).info())?.channel_address ?? '',
    }),
    name: t.string({
      nullable: true,
      description: 'Display name of the channel.',
      resolve: async (c, _args, ctx) => (await channelLoaders(ctx, c.nickname).info())?.channel_name ?? null,
    }),
    hash: t.string({
      nullable: true,
      description: 'Portable hash of the channel, its xchan hash.',
      resolve: async (c, _args, ctx) => (await channelLoaders(ctx, c.nickname).info())?.channel_hash ?? null,
    }),
    guid: t.string({
      nullable: true,
      description: 'Globally unique id of the channel.',
      resolve: async (c, _args, ctx) => (await channelLoaders(ctx, c.nickname).info())?.channel_guid ?? null,
    }),
    timezone: t.string({
      nullable: true,
      description: 'Time zone of the channel.',
      resolve: async (c, _args, ctx) => (await channelLoaders(ctx, c.nickname).info())?.channel_timezone ?? null,
    }),
    xchan: t.field({
      complexity: UPSTREAM_CALL,
      type: Xchan,
      nullable: true,
      description: "The channel's own global identity.",
      resolve: async (c, _args, ctx) => {
        const hash = (await channelLoaders(ctx, c.nickname).info())?.channel_hash;
        return hash ? { hash } : null;
      },
    }),
    accountChannels: t.stringList({
      complexity: UPSTREAM_CALL,
      description: "Nicknames of every channel of the login's account (`channel/list`).",
      resolve: (_c, _args, ctx) => ctx.hubzilla.loaders.channelList(),
    }),
    export: t.field({
      complexity: UPSTREAM_CALL,
      type: 'JSON',
      description:
        "The channel export (`channel/export/basic`) as JSON, with every private key, password hash, salt, secret and token removed at any depth. Without sections, the hub's defaults: channel, connections, config, apps. Hubzilla 8 has no `mail` section any more (private mail is not exported).",
      args: {
        sections: t.arg({ type: [ExportSection], description: "Sections to export; the hub's defaults when left out." }),
        posts: t.arg.boolean({
          defaultValue: false,
          description:
            "Adds the channel's wall posts of the last month (the `items` section) to the sections, or to the defaults. The hub's own `posts` parameter is read by nothing in Hubzilla 8; this is what it stands for.",
        }),
      },
      resolve: (c, args, ctx) => channelLoaders(ctx, c.nickname).client.exportChannel(args.sections ?? null, args.posts === true),
    }),
  }),
});

builder.queryFields((t) => ({
  channel: t.field({
    complexity: UPSTREAM_CALL,
    type: Channel,
    nullable: true,
    description:
      "A Hubzilla channel: the login's own (default) channel, or another channel of the same account by nickname; null when the account has no such channel.",
    args: { nickname: t.arg.string({ description: "Nickname of a channel of the caller's account; the login's channel when left out." }) },
    resolve: async (_root, args, ctx) => {
      if (args.nickname === null || args.nickname === undefined) return { nickname: null };
      // Nicknames match without regard to case, as the hub's database does; the hub's own spelling goes on.
      return accountChannel(ctx, args.nickname);
    },
  }),
}));
