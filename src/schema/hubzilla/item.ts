/**
 * ChannelItem: a post or comment of a Hubzilla channel, with every field
 * the hub's activity object and item row carry; Channel.stream,
 * Channel.networkStream, Channel.item; and the channelItemPost mutation.
 *
 * Streams and item/full send activity objects (`message_id`, embedded
 * `author{}`/`owner{}`, `flags[]`; numeric ids only in item/full), item/update
 * sends the raw row (`mid`, `author_xchan`, `item_*`): both are normalised to
 * one record by the client. An item keeps the thread it was read with, so
 * `parent` and `comments` cost no further call.
 */
import { createHmac } from 'node:crypto';
import { InputError } from '../../errors.js';
import { threadsOf, type NetworkStreamFilters } from '../../upstreams/hubzilla/client.js';
import type { ItemRecord } from '../../upstreams/hubzilla/records.js';
import { STREAM_READS } from '../../upstreams/hubzilla/loaders.js';
import { activityType, bodyImages, bodyText, objectKind, type ActivityType, type BodyImage, type ObjectKind } from '../../upstreams/hubzilla/vocabulary.js';
import { builder } from '../builder.js';
import { UPSTREAM_CALL, connectionCost } from '../cost.js';
import type { Context } from '../context.js';
import { localIdOf } from '../global-id.js';
import { resolveConnection, type ConnectionResult } from '../pagination.js';
import { checkSize } from '../../upstreams/pagination.js';
import { type CursorSeal, threadsAfter, threadsBefore, type Rank, type ThreadWindowFetcher } from '../../upstreams/hubzilla/tied-pages.js';
import { Channel, channelLoaders, parseScopedId, scopedId } from './channel.js';
import { Xchan, xchanByHash, type XchanModel } from './xchan.js';

/** An item with the channel it belongs to and, where known, its whole thread. */
export interface ItemModel {
  record: ItemRecord;
  channel: string | null;
  thread?: readonly ItemRecord[];
}

export const ChannelItem = builder.objectRef<ItemModel>('ChannelItem');

const ACTIVITY_DESCRIPTIONS: Record<ActivityType, string> = {
  POST: 'Posts content (`…/post` on Hubzilla 8, `Create` on 10).',
  UPDATE: 'Updates an item (`…/update`, `Update`).',
  DELETE: 'Deletes an item (`…/delete`, `Delete`).',
  LIKE: 'Likes the parent item (`…/like`, `Like`).',
  DISLIKE: 'Dislikes the parent item (`…/dislike`, `Dislike`).',
  SHARE: 'Shares (repeats) an item (`…/share`, `Announce`).',
  FOLLOW: 'Follows a thread or channel (`…/follow`, `Follow`).',
  AGREE: 'Votes yes on a consensus item.',
  DISAGREE: 'Votes no on a consensus item.',
  ABSTAIN: 'Abstains on a consensus item.',
  ATTEND_YES: 'Will attend the event (`…/attendyes`, `Accept`).',
  ATTEND_NO: 'Will not attend the event (`…/attendno`, `Reject`).',
  ATTEND_MAYBE: 'May attend the event (`…/attendmaybe`, `TentativeAccept`).',
  FAVORITE: 'Marks the parent item as a favourite.',
  OTHER: 'A verb this schema does not map: `verb` holds it.',
};

/** An enum whose values are their own names, each with its description. */
function describedEnum<V extends string>(name: string, description: string, descriptions: Readonly<Record<V, string>>) {
  const values = Object.fromEntries(Object.entries<string>(descriptions).map(([value, about]) => [value, { value, description: about }]));
  return builder.enumType(name, { description, values: values as Record<V, { value: V; description: string }> });
}

const ChannelItemActivityType = describedEnum(
  'ChannelItemActivityType',
  "What an item's activity means, the same whichever vocabulary the hub wrote it in (Hubzilla 8's URIs, Hubzilla 10's ActivityStreams names).",
  ACTIVITY_DESCRIPTIONS,
);

const OBJECT_DESCRIPTIONS: Record<ObjectKind, string> = {
  NOTE: 'A text note: a post or a comment (`…/note` and `…/comment` on Hubzilla 8, `Note` for both on 10; `isComment` tells them apart).',
  ARTICLE: 'An article (`…/article`, `Article`).',
  PHOTO: 'A photo (`…/photo`, `Image`).',
  EVENT: 'An event (`…/event`, `Event`).',
  QUESTION: 'A poll (`Question`).',
  PERSON: 'A person, e.g. of a connection activity (`…/person`, `Person`).',
  OTHER: 'An object type this schema does not map: `objectType` holds it.',
};

const ChannelItemObjectKind = describedEnum(
  'ChannelItemObjectKind',
  'What kind of object an item is, the same whichever vocabulary the hub wrote it in.',
  OBJECT_DESCRIPTIONS,
);

const ChannelItemImage = builder.objectRef<BodyImage>('ChannelItemImage').implement({
  description: 'An image the body links (`[zmg]`/`[img]`), such as the one Hubzilla adds for an uploaded photo.',
  fields: (t) => ({
    url: t.string({ description: 'URL of the image (a scale of the photo for an upload).', resolve: (i) => i.url }),
    link: t.string({
      nullable: true,
      description: 'Where the image links to (the photo page for an upload); null when it links nowhere.',
      resolve: (i) => i.link,
    }),
    name: t.string({ description: 'Name shown for the image (the file name for an upload); empty when none.', resolve: (i) => i.name }),
  }),
});

/** Models for a list of items that hold whole threads, each item knowing its thread. */
function withThreads(items: readonly ItemRecord[], channel: string | null, ctx: Context): ItemModel[] {
  const threadOf = new Map<string, ItemRecord[]>();
  for (const thread of threadsOf(items)) {
    threadOf.set(thread.top.message_id, thread.items);
    channelLoaders(ctx, channel).primeThread(thread.items);
  }
  return items.map((record) => ({ record, channel, thread: threadOf.get(record.message_top) ?? threadOf.get(record.message_id) }));
}

async function threadOf(item: ItemModel, ctx: Context): Promise<readonly ItemRecord[]> {
  if (item.thread) return item.thread;
  return (await channelLoaders(ctx, item.channel).thread({ mid: item.record.message_top })) ?? [item.record];
}

function person(summary: ItemRecord['author'], hash: string | null): XchanModel | null {
  if (summary && (summary.guid || summary.address)) return { summary, ...(hash ? { hash } : {}) };
  return xchanByHash(hash);
}

/** The global id's local part: the message id, which identifies an item on every hub. */
/** An item by the local part of its global id: its thread is read once per request, as the channel's loaders do. */
async function loadChannelItem(id: string, ctx: Context): Promise<ItemModel | null> {
  const { channel, local } = parseScopedId(id);
  const [top = '', mid = top] = local.split(' ');
  const thread = await channelLoaders(ctx, channel).thread({ mid: top });
  const record = thread?.find((i) => i.message_id === mid);
  return record && thread ? { record, channel, thread } : null;
}

function itemKey(record: ItemRecord): string {
  return record.message_top === record.message_id ? record.message_id : `${record.message_top} ${record.message_id}`;
}

export const ChannelItemFlags = builder.objectRef<ItemRecord['flags']>('ChannelItemFlags').implement({
  description: 'The flags of an item. Null where the encoding the hub used does not carry the flag (stream activities carry fewer than item/full).',
  fields: (t) => {
    const flag = (key: keyof ItemRecord['flags'], description: string) => t.boolean({ nullable: true, description, resolve: (f) => f[key] });
    return {
      origin: flag('origin', 'Indicates the item was created on this hub.'),
      unseen: flag('unseen', 'Indicates the owner has not seen the item yet.'),
      starred: flag('starred', 'Indicates the owner starred the item.'),
      uplink: flag('uplink', 'Indicates the item was relayed up to the owner.'),
      consensus: flag('consensus', 'Indicates a consensus (voting) item.'),
      wall: flag('wall', "Indicates the item is on the channel's own wall."),
      threadTop: flag('thread_top', 'Indicates the top-level item of its thread.'),
      notShown: flag('notshown', 'Indicates the item is not shown in streams.'),
      nsfw: flag('nsfw', 'Indicates adult or sensitive content.'),
      relay: flag('relay', 'Indicates the item is being relayed.'),
      mentionsMe: flag('mentionsme', 'Indicates the item mentions the channel.'),
      noComment: flag('nocomment', 'Indicates comments are disabled.'),
      obscured: flag('obscured', 'Indicates the content is obscured.'),
      verified: flag('verified', 'Indicates the signature was verified.'),
      retained: flag('retained', 'Indicates the item is kept from expiry (it has replies).'),
      rss: flag('rss', 'Indicates the item came from an RSS feed.'),
      deleted: flag('deleted', 'Indicates the item was deleted.'),
      hidden: flag('hidden', 'Indicates the item is hidden.'),
      unpublished: flag('unpublished', 'Indicates a draft that is not published.'),
      delayed: flag('delayed', 'Indicates a post scheduled for later.'),
      pendingRemove: flag('pending_remove', 'Indicates the item is about to be removed.'),
      blocked: flag('blocked', 'Indicates the item is blocked by moderation.'),
      private: flag('private', 'Indicates the item has a restricted audience.'),
      direct: flag('direct', 'Indicates a direct message.'),
    };
  },
});

export const ChannelItemAttachment = builder.objectRef<ItemRecord['attach'][number]>('ChannelItemAttachment').implement({
  description: 'A file attached to an item.',
  fields: (t) => ({
    href: t.exposeString('href', { description: 'URL of the attached file on the hub.' }),
    length: t.int({ nullable: true, description: 'Size of the file in bytes.', resolve: (a) => a.length }),
    type: t.exposeString('type', { description: 'Media type of the file.' }),
    title: t.exposeString('title', { description: 'Name of the file.' }),
    revision: t.int({ nullable: true, description: 'Revision of the file.', resolve: (a) => a.revision }),
  }),
});

export const ChannelItemTag = builder.objectRef<ItemRecord['tags'][number]>('ChannelItemTag').implement({
  description: 'A tag of an item: a hashtag, mention, category, saved folder, …',
  fields: (t) => ({
    name: t.string({ description: 'Text of the tag, e.g. `graphql` or a mentioned name.', resolve: (tag) => tag.tag }),
    url: t.exposeString('url', { description: 'URL the tag links to.' }),
    type: t.exposeString('type', { description: 'Kind of tag as the hub names it: `hashtag`, `mention`, `category`, `file`, `bookmark`, …' }),
  }),
});

/** Item fields whose empty string means "not set". */
type OptionalText =
  | 'app'
  | 'lang'
  | 'html'
  | 'target_type'
  | 'llink'
  | 'location'
  | 'longlat'
  | 'route'
  | 'layout_mid'
  | 'postopts'
  | 'resource_id'
  | 'resource_type'
  | 'public_scope';

builder.node(ChannelItem, {
  description: "A post or comment in a Hubzilla channel (an item), as the hub's activity object and item record describe it.",
  id: { resolve: (i) => scopedId(i.channel, itemKey(i.record)) },
  loadOne: (id, ctx) => loadChannelItem(id, ctx),
  fields: (t) => {
    const text = (key: keyof ItemRecord, description: string) => t.string({ description, resolve: (i) => String(i.record[key] ?? '') });
    // The hub writes "" where these were never set: a reader gets null instead.
    const optional = (key: OptionalText, description: string) =>
      t.string({ nullable: true, description: `${description} Null when not set.`, resolve: (i) => i.record[key] || null });
    const restId = (key: 'id' | 'parent' | 'uid' | 'aid', description: string) =>
      t.field({ type: 'SafeInt', nullable: true, description, resolve: (i) => i.record[key] });
    const time = (key: 'created' | 'edited' | 'expires' | 'commented' | 'received' | 'changed' | 'comments_closed', description: string) =>
      t.field({ type: 'DateTime', nullable: true, description, resolve: (i) => i.record[key] });
    const list = (key: 'allow_cid' | 'allow_gid' | 'deny_cid' | 'deny_gid', description: string) =>
      t.stringList({
        nullable: true,
        description: `${description} Null where the hub does not report it (stream items; item/full and item/update do).`,
        resolve: (i) => i.record[key],
      });
    const json = (key: 'object' | 'target', description: string) =>
      t.string({
        nullable: true,
        description,
        resolve: (i) =>
          i.record[key] === null || i.record[key] === undefined
            ? null
            : typeof i.record[key] === 'string'
              ? (i.record[key] as string)
              : JSON.stringify(i.record[key]),
      });
    return {
      restId: restId('id', 'Numeric id of the item on this hub; only item/full and item/update report it, streams do not.'),
      parentRestId: restId('parent', "Numeric id of the thread's top item; only item/full and item/update report it."),
      channelRestId: restId('uid', 'Numeric id of the channel holding the item (`uid`), where reported.'),
      accountRestId: restId('aid', 'Numeric id of the account holding the item (`aid`), where reported.'),
      uuid: text('uuid', 'UUID of the item.'),
      messageId: text('message_id', 'Message id of the item (`mid`), a URL unique across hubs.'),
      threadMessageId: text('message_top', "Message id of the thread's top item (`parent_mid`)."),
      inReplyToMessageId: text('message_parent', 'Message id of the item this one replies to (`thr_parent`); its own id for a top item.'),
      createdAt: time('created', 'Time the item was created.'),
      editedAt: time('edited', 'Time the item was last edited.'),
      expiresAt: time('expires', 'Time the item expires; null when it never does.'),
      commentedAt: time('commented', "Time of the thread's latest comment."),
      receivedAt: time('received', 'Time this hub received the item, where reported.'),
      changedAt: time('changed', 'Time the item last changed in any way, where reported.'),
      commentsClosedAt: time('comments_closed', 'Time comments close; null when they never do.'),
      mimetype: text('mimetype', 'Media type of the body, `text/bbcode` by default.'),
      title: text('title', 'Title of the item.'),
      summary: text('summary', 'Summary (content warning) of the item.'),
      body: text('body', 'Content of the item, in its mimetype.'),
      html: optional('html', 'Rendered HTML of the body, where the hub stored it.'),
      app: optional('app', 'Application or network name shown with the item (set with the form field `source`).'),
      lang: optional('lang', 'Language of the item, where detected.'),
      revision: t.int({ nullable: true, description: 'Revision of the item, where reported.', resolve: (i) => i.record.revision }),
      verb: text('verb', 'Activity verb as the hub stored it, e.g. `http://activitystrea.ms/schema/1.0/post` (Hubzilla 8) or `Create` (10); see activityType.'),
      objectType: text('object_type', 'Activity object type as the hub stored it, e.g. `…/note` or `…/comment` (Hubzilla 8) or `Note` (10); see objectKind.'),
      activityType: t.field({
        type: ChannelItemActivityType,
        description: 'What the verb means, the same on Hubzilla 8 and 10.',
        resolve: (i) => activityType(i.record.verb),
      }),
      objectKind: t.field({
        type: ChannelItemObjectKind,
        description: 'What kind of object the item is, the same on Hubzilla 8 and 10.',
        resolve: (i) => objectKind(i.record.object_type),
      }),
      text: t.string({
        description:
          "The body without the image links at its start or end, where Hubzilla puts an uploaded medium's link (after the text on Hubzilla 8, before it on 10): the same text whichever release stored it. Links inside the text stay.",
        resolve: (i) => bodyText(i.record.body),
      }),
      images: t.field({
        type: [ChannelItemImage],
        description: 'The images the body links, in order (uploaded photos among them).',
        resolve: (i) => bodyImages(i.record.body),
      }),
      targetType: optional('target_type', 'Activity target type.'),
      object: json('object', 'The activity object as JSON text, where present.'),
      target: json('target', 'The activity target as JSON text, where present.'),
      permalink: text('permalink', 'Permanent link of the item (`plink`).'),
      localLink: optional('llink', 'Link to the item on this hub (`llink`), where reported.'),
      location: optional('location', 'Free-form location of the item.'),
      coordinates: optional('longlat', 'Geographic coordinates of the item (`coord`), `lat lon`.'),
      signature: t.string({
        nullable: true,
        description: "Signature of the item by its author, as the hub sends it: empty for an item it did not sign; null where the hub's encoding carries none.",
        resolve: (i) => i.record.signature,
      }),
      route: optional('route', 'Route the item travelled between hubs.'),
      layoutMessageId: optional('layout_mid', 'Message id of the layout of a design element.'),
      postOptions: optional('postopts', 'Posting options of the item.'),
      resourceId: optional('resource_id', 'Id of the resource the item stands for, e.g. a photo.'),
      resourceType: optional('resource_type', 'Type of the resource the item stands for, e.g. `photo`.'),
      publicScope: optional('public_scope', 'Public policy of the item (`public_policy`).'),
      commentScope: text('comment_scope', 'Who may comment (`comment_policy`), e.g. `contacts`.'),
      allowContacts: list('allow_cid', 'Hashes of the xchans allowed to see the item; empty means unrestricted.'),
      allowGroups: list('allow_gid', 'Hashes of the privacy groups allowed to see the item.'),
      denyContacts: list('deny_cid', 'Hashes of the xchans denied the item.'),
      denyGroups: list('deny_gid', 'Hashes of the privacy groups denied the item.'),
      restrict: t.int({ nullable: true, description: 'Raw `item_restrict` value, where reported.', resolve: (i) => i.record.item_restrict }),
      rawFlags: t.int({ nullable: true, description: 'Raw `item_flags` bit field, where reported.', resolve: (i) => i.record.item_flags }),
      itemType: t.int({
        nullable: true,
        description: 'Item type (`item_type`): 0 for a normal post, others for web pages and design elements.',
        resolve: (i) => i.record.item_type,
      }),
      flags: t.field({ type: ChannelItemFlags, description: "The item's flags as booleans.", resolve: (i) => i.record.flags }),
      author: t.field({
        type: Xchan,
        nullable: true,
        description: 'Who wrote the item.',
        resolve: (i) => person(i.record.author, i.record.author_xchan),
      }),
      owner: t.field({
        type: Xchan,
        nullable: true,
        description: 'Whose wall or thread the item belongs to.',
        resolve: (i) => person(i.record.owner, i.record.owner_xchan),
      }),
      source: t.field({
        type: Xchan,
        nullable: true,
        description: 'Where a shared or relayed item came from (`source_xchan`), where reported.',
        resolve: (i) => xchanByHash(i.record.source_xchan),
      }),
      attachments: t.field({ type: [ChannelItemAttachment], description: 'Files attached to the item.', resolve: (i) => i.record.attach }),
      tags: t.field({ type: [ChannelItemTag], description: 'Hashtags, mentions, categories and other tags of the item.', resolve: (i) => i.record.tags }),
      categories: t.stringList({
        description: 'Categories of the item (tags of type `category`).',
        resolve: (i) => i.record.tags.filter((tag) => tag.type === 'category').map((tag) => tag.tag),
      }),
      isComment: t.boolean({
        description: "Indicates a comment rather than a thread's top item.",
        resolve: (i) => i.record.message_id !== i.record.message_top,
      }),
      parent: t.field({
        type: ChannelItem,
        nullable: true,
        description: "The item this one replies to; null for a thread's top item.",
        resolve: async (i, _args, ctx) => {
          if (i.record.message_id === i.record.message_top) return null;
          const thread = await threadOf(i, ctx);
          const parent = thread.find((p) => p.message_id === i.record.message_parent) ?? thread.find((p) => p.message_id === i.record.message_top);
          return parent ? { record: parent, channel: i.channel, thread } : null;
        },
      }),
      threadTop: t.field({
        type: ChannelItem,
        nullable: true,
        description: 'The top item of the thread (the item itself for a top item).',
        resolve: async (i, _args, ctx) => {
          if (i.record.message_id === i.record.message_top) return i;
          const thread = await threadOf(i, ctx);
          const top = thread.find((p) => p.message_id === i.record.message_top);
          return top ? { record: top, channel: i.channel, thread } : null;
        },
      }),
      comments: t.field({
        type: [ChannelItem],
        description:
          "For a thread's top item, every comment of the thread in conversation order; for a comment, its direct replies. Read with the thread, so no extra call when the item came from a stream.",
        resolve: async (i, _args, ctx) => {
          const thread = await threadOf(i, ctx);
          const top = i.record.message_id === i.record.message_top;
          return thread
            .filter((c) => c.message_id !== i.record.message_id && (top ? c.message_top === i.record.message_id : c.message_parent === i.record.message_id))
            .map((record) => ({ record, channel: i.channel, thread }));
        },
      }),
    };
  },
});

export const ChannelItemConnection = builder.connectionObject(
  {
    type: ChannelItem,
    name: 'ChannelItemConnection',
    description: 'A page of channel items.',
    fields: (t) => ({
      cut: t.boolean({
        nullable: true,
        description:
          "True when the hub cut the list and reading on would cost more than the field's estimate (`stream` with over 1,000 threads since `since`): the newest are missing. Null for lists the hub never cuts.",
        resolve: (connection) => (connection as { cut?: boolean }).cut ?? null,
      }),
    }),
  },
  { name: 'ChannelItemEdge', description: 'A channel item with its cursor.' },
);

const NetworkStreamOrder = builder.enumType('NetworkStreamOrder', {
  description: "Order of the network stream's threads, newest first.",
  values: {
    COMMENTED: { value: 'commented', description: "By the time of the latest comment (the hub's default)." },
    CREATED: { value: 'post', description: "By the time the thread's top item was created." },
  } as const,
});

const ChannelStreamOrder = builder.enumType('ChannelStreamOrder', {
  description: "Order of the threads of a channel's own stream; a thread's items stay in conversation order either way.",
  values: {
    OLDEST_FIRST: { value: 'oldest', description: "The hub's order: the oldest thread first." },
    NEWEST_FIRST: { value: 'newest', description: 'The newest thread first, as a stream reader shows it.' },
  } as const,
});

/** The same items with their threads in reverse order, each thread's items kept in conversation order. */
function newestThreadsFirst(models: readonly ItemModel[]): ItemModel[] {
  const threads = new Map<string, ItemModel[]>();
  for (const model of models) {
    const thread = threads.get(model.record.message_top);
    if (thread) thread.push(model);
    else threads.set(model.record.message_top, [model]);
  }
  return [...threads.values()].reverse().flat();
}

/**
 * A page of network/stream threads in the gateway's exact order
 * (tied-pages.ts): forward with first/after, backward with last/before.
 */
async function exactThreadPages(
  args: { first?: number | null; after?: string | null; last?: number | null; before?: string | null },
  defaultPageSize: number,
  source: { fetch: ThreadWindowFetcher<ItemModel>; rankOf: (m: ItemModel) => Rank; seal: CursorSeal },
): Promise<ConnectionResult<ItemModel>> {
  const backward = args.last !== null && args.last !== undefined;
  if (backward && (args.before === null || args.before === undefined)) {
    throw new InputError('This list has no total, so "last" needs "before"; page with "first" instead.', ['last']);
  }
  if (backward && (args.first != null || args.after != null))
    throw new InputError('Page forward (first, after) or backward (last, before), not both.', ['last']);
  if (!backward && args.before != null) throw new InputError('"before" pages backward: give "last" with it.', ['before']);
  const page = backward
    ? await threadsBefore(source.fetch, source.rankOf, checkSize(args.last, 'last') ?? defaultPageSize, args.before as string, source.seal)
    : await threadsAfter(source.fetch, source.rankOf, checkSize(args.first, 'first') ?? defaultPageSize, args.after ?? null, source.seal);
  return {
    edges: page.items,
    pageInfo: {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: page.hasPreviousPage,
      startCursor: page.items[0]?.cursor ?? null,
      endCursor: page.items.at(-1)?.cursor ?? null,
    },
    totalCount: null,
  };
}

/** A DateTime as the hub's `YYYY-MM-DD HH:MM:SS` (UTC). */
export function hubDate(value: Date | null | undefined): string | undefined {
  return value ? value.toISOString().slice(0, 19).replace('T', ' ') : undefined;
}

builder.objectFields(Channel, (t) => ({
  stream: t.connection(
    {
      type: ChannelItem,
      description:
        "The channel's wall items (`channel/stream`) created or changed since a time, whole threads in conversation order, oldest thread first unless `order` says newest first: top items and comments alike. The hub does not paginate this list, so it is read whole and paged here. The hub keeps the 201 oldest threads of a read: past them the gateway reads on from the last thread's time, up to 5 reads (1,000 threads; `cut` says when that was not enough).",
      args: {
        since: t.arg({ type: 'DateTime', description: "Items created or changed after this time; the hub's default is 14 days ago." }),
        order: t.arg({
          type: ChannelStreamOrder,
          defaultValue: 'oldest',
          required: true,
          description: 'Order of the threads: oldest first (the default) or newest first.',
        }),
      },
      // Read whole (the window pages it here): up to STREAM_READS reads, however far the window goes.
      complexity: (args, ctx) => ({ field: STREAM_READS, multiplier: connectionCost(args, ctx.defaultPageSize).multiplier }),
      resolve: async (c, args, ctx) => {
        const { items, cut } = await channelLoaders(ctx, c.nickname).stream(hubDate(args.since) ?? null);
        const inOrder = withThreads(items, c.nickname, ctx);
        const models = args.order === 'newest' ? newestThreadsFirst(inOrder) : inOrder;
        const connection = await resolveConnection(args, ctx.defaultPageSize, async (page, perPage) => ({
          items: models.slice((page - 1) * perPage, page * perPage),
          total: models.length,
          hasNext: page * perPage < models.length,
        }));
        return { ...connection, cut };
      },
    },
    ChannelItemConnection,
  ),
  networkStream: t.connection(
    {
      type: ChannelItem,
      description:
        "The channel's network stream (`network/stream`), one node per thread: its top item, with the thread's comments in `comments` (read in the same call). Newest first by `order`'s time, threads with the same second by message id: every thread comes exactly once over a walk forward (first/after) or backward (last/before), though the hub orders ties differently for each page it is asked for, unless threads are posted or deleted above the cursor during the walk (up to 8 are absorbed) or more than 1,000 share one second (an error). With sinceRestId, comments whose thread is older are left out.",
      args: {
        search: t.arg.string({ description: 'Only threads whose body contains this text, or `#tag` for a hashtag.' }),
        category: t.arg.string({ description: 'Only threads in this category.' }),
        starred: t.arg.boolean({ description: 'Only starred threads.' }),
        wall: t.arg.boolean({ description: "Only threads on the channel's own wall." }),
        order: t.arg({ type: NetworkStreamOrder, description: 'Order of the threads; by latest comment when left out.' }),
        sinceRestId: t.arg({ type: 'SafeInt', description: "Only items with a numeric id above this one; older threads' comments are dropped too." }),
        createdAfter: t.arg({ type: 'DateTime', description: 'Only threads created at or after this time.' }),
        createdBefore: t.arg({ type: 'DateTime', description: 'Only threads created at or before this time.' }),
        minCloseness: t.arg.int({ description: 'Only threads from connections at least this close (0 to 99).' }),
        maxCloseness: t.arg.int({ description: 'Only threads from connections at most this close (0 to 99).' }),
      },
      resolve: (c, args, ctx) => {
        // Checked here, before any call: the hub takes any number and answers nothing useful for it.
        for (const [name, value] of [
          ['minCloseness', args.minCloseness],
          ['maxCloseness', args.maxCloseness],
        ] as const) {
          if (value !== null && value !== undefined && (value < 0 || value > 99))
            throw new InputError(`"${name}" must be between 0 and 99, got ${value}.`, [name]);
        }
        // No `gid` or `cid`: on 8.8.7 gid always crashes the hub and an unknown cid does too.
        const filters: NetworkStreamFilters = {
          search: args.search ?? undefined,
          cat: args.category ?? undefined,
          star: args.starred ?? undefined,
          wall: args.wall ?? undefined,
          order: args.order ?? undefined,
          since_id: args.sinceRestId ?? undefined,
          dbegin: hubDate(args.createdAfter),
          dend: hubDate(args.createdBefore),
          cmin: args.minCloseness ?? undefined,
          cmax: args.maxCloseness ?? undefined,
        };
        const loaders = channelLoaders(ctx, c.nickname);
        return exactThreadPages(args, ctx.defaultPageSize, {
          fetch: async (offset, limit) => {
            const threads = await loaders.client.listNetworkStream(filters, { offset, limit });
            // A comment whose top since_id dropped is not a thread of the hub's order: it is left out.
            const whole = threads.items.filter((thread) => thread.top.message_id === thread.top.message_top);
            for (const thread of whole) loaders.primeThread(thread.items);
            return { full: threads.full, items: whole.map((thread): ItemModel => ({ record: thread.top, channel: c.nickname, thread: thread.items })) };
          },
          rankOf: (m) => ({ key: (filters.order === 'post' ? m.record.created : m.record.commented) ?? '', id: m.record.message_id }),
          // A cursor is this list's: this channel's, under these filters.
          seal: (text) =>
            createHmac('sha256', ctx.cursorKey)
              .update(JSON.stringify([c.nickname, filters, text]))
              .digest('base64url')
              .slice(0, 22),
        });
      },
    },
    ChannelItemConnection,
  ),
  item: t.field({
    complexity: UPSTREAM_CALL,
    type: ChannelItem,
    nullable: true,
    description:
      "The top item of a thread, by numeric id or message id, read with its whole thread (`item/full`); null when there is none. The hub finds threads by their top item only: a comment's id gives null.",
    args: {
      restId: t.arg({ type: 'SafeInt', description: "Numeric id of the thread's top item." }),
      messageId: t.arg.string({ description: "Message id of the thread's top item." }),
    },
    resolve: async (c, args, ctx) => {
      const byId = args.restId !== null && args.restId !== undefined;
      const byMid = typeof args.messageId === 'string';
      if (byId === byMid) throw new InputError('Give exactly one of restId or messageId.', byId ? ['restId', 'messageId'] : ['restId']);
      const loaders = channelLoaders(ctx, c.nickname);
      const thread = byId ? await loaders.thread({ item_id: args.restId as number }) : await loaders.thread({ mid: args.messageId as string });
      const top = thread?.find((i) => (byId ? i.id === args.restId : i.message_id === args.messageId));
      return top && thread ? { record: top, channel: c.nickname, thread } : null;
    },
  }),
}));

// --- channelItemPost -------------------------------------------------------------

// Federation: a supergraph names an item by its global id; loaded as `node` loads it.
builder.asEntity(ChannelItem, {
  key: builder.selection<{ id: string }>('id'),
  resolveReference: (ref, ctx) => {
    const id = localIdOf(ref.id, 'ChannelItem');
    return id === null ? null : loadChannelItem(id, ctx);
  },
});
