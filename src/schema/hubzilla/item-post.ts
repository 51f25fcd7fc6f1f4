/**
 * channelItemPost: a post, a comment, an activity (a like, a vote, an
 * RSVP), a web page or an edit, through item/update. Two things the hub
 * does that a caller would not guess are handled here:
 *
 * - An edit takes title, summary, categories and media type from the form
 *   and clears what the form leaves out (Zotlabs/Module/Item.php keeps only
 *   the ACL, location, verb and app of the original). An edit that leaves
 *   them out therefore reads the item first and sends them again.
 * - An ACL naming a hash the channel does not know would make the item
 *   visible to nobody; such lists are refused before anything is written.
 */
import { randomUUID } from 'node:crypto';
import { UpstreamError } from '../../errors.js';
import { isNickname, ItemUpdateRefused, type ItemUpdateParams } from '../../upstreams/hubzilla/client.js';
import type { ChannelLoaders } from '../../upstreams/hubzilla/loaders.js';
import type { ItemRecord } from '../../upstreams/hubzilla/records.js';
import { builder } from '../builder.js';
import type { Context } from '../context.js';
import { UserError, inputError, type UserErrorShape } from '../user-error.js';
import { accountNickname, channelLoaders } from './channel.js';
import { ChannelItem, hubDate, type ItemModel } from './item.js';

interface PostPayloadShape {
  item: ItemModel | null;
  errors: UserErrorShape[];
}

const ChannelItemPostPayload = builder.objectRef<PostPayloadShape>('ChannelItemPostPayload').implement({
  description: 'Result of channelItemPost.',
  fields: (t) => ({
    item: t.field({ type: ChannelItem, nullable: true, description: 'The created or edited item; null when refused.', resolve: (p) => p.item }),
    errors: t.field({ type: [UserError], nullable: false, description: 'Why the post was refused; empty on success.', resolve: (p) => p.errors }),
  }),
});

const ACTIVITY_SCHEMA = 'http://activitystrea.ms/schema/1.0/';
const ZOT_ACTIVITY = 'http://purl.org/zot/activity/';

const ChannelItemVerb = builder.enumType('ChannelItemVerb', {
  description: "The activity an item performs (its `verb`, Hubzilla 8's activity-stream URIs).",
  values: {
    POST: { value: `${ACTIVITY_SCHEMA}post`, description: 'Posts content: the default.' },
    LIKE: { value: `${ACTIVITY_SCHEMA}like`, description: 'Likes the parent item.' },
    DISLIKE: { value: `${ZOT_ACTIVITY}dislike`, description: 'Dislikes the parent item.' },
    AGREE: { value: `${ZOT_ACTIVITY}agree`, description: 'Votes yes on a consensus item.' },
    DISAGREE: { value: `${ZOT_ACTIVITY}disagree`, description: 'Votes no on a consensus item.' },
    ABSTAIN: { value: `${ZOT_ACTIVITY}abstain`, description: 'Abstains on a consensus item.' },
    ATTEND_YES: { value: `${ZOT_ACTIVITY}attendyes`, description: 'Will attend the event of the parent item.' },
    ATTEND_NO: { value: `${ZOT_ACTIVITY}attendno`, description: 'Will not attend the event of the parent item.' },
    ATTEND_MAYBE: { value: `${ZOT_ACTIVITY}attendmaybe`, description: 'May attend the event of the parent item.' },
    FAVORITE: { value: `${ACTIVITY_SCHEMA}favorite`, description: 'Marks the parent item as a favourite.' },
  } as const,
});

const ChannelItemObjectType = builder.enumType('ChannelItemObjectType', {
  description: 'What kind of object an item is (its `obj_type`); the hub picks note or comment when left out.',
  values: {
    NOTE: { value: `${ACTIVITY_SCHEMA}note`, description: 'A post.' },
    COMMENT: { value: `${ACTIVITY_SCHEMA}comment`, description: 'A comment.' },
    PHOTO: { value: `${ACTIVITY_SCHEMA}photo`, description: 'A photo.' },
  } as const,
});

const ChannelItemPageType = builder.enumType('ChannelItemPageType', {
  description: 'The kind of page an item is, when it is not a post (`webpage`, the item type).',
  values: {
    WEBPAGE: { value: 3, description: 'A web page of the channel.' },
    BLOCK: { value: 1, description: 'A block: a piece of content for layouts.' },
    LAYOUT: { value: 2, description: 'A layout (PDL) that arranges blocks on pages.' },
    CARD: { value: 6, description: 'A card.' },
    ARTICLE: { value: 7, description: 'An article.' },
  } as const,
});

const ChannelItemWebpageInput = builder.inputType('ChannelItemWebpageInput', {
  description: 'Makes the item a web page or another design element instead of a post.',
  fields: (t) => ({
    type: t.field({ type: ChannelItemPageType, required: true, description: 'The kind of page.' }),
    name: t.string({ required: true, description: 'Name of the page in its URL (`pagetitle`), e.g. `about`.' }),
    layoutMessageId: t.string({ description: 'Message id of the layout that arranges the page (`layout_mid`).' }),
  }),
});

const ChannelItemRemoteInput = builder.inputType('ChannelItemRemoteInput', {
  description: "The item's identity on another network or service (`namespace` and `remote_id`). Posting the same pair again edits the item it first created.",
  fields: (t) => ({
    namespace: t.string({ required: true, description: 'Name of the network or service, e.g. `twitter`.' }),
    remoteId: t.string({ required: true, description: 'Id of the resource on that network or service.' }),
  }),
});

const ChannelItemPostInput = builder.inputType('ChannelItemPostInput', {
  description: 'A new post, a comment (with parentRestId or parentMessageId), or an edit (with restId).',
  fields: (t) => ({
    channel: t.string({ description: "Nickname of a channel of the caller's account to post in; the login's channel when left out." }),
    restId: t.field({
      type: 'SafeInt',
      description:
        "Numeric id of an existing item to edit. Title, summary, categories and media type left out keep their values (the gateway reads the item first and sends them again, as the hub clears what an edit leaves out); null clears them. item/full finds threads by their top item only, so for a comment send them again. An item of another author is the channel's local copy: the edit changes that copy only, never the author's original or other hubs' copies.",
    }),
    parentRestId: t.field({ type: 'SafeInt', description: 'Numeric id of the item to comment on.' }),
    parentMessageId: t.string({ description: 'Message id of the item to comment on.' }),
    body: t.string({ required: true, description: 'Content, in `mimetype` (BBCode by default).' }),
    title: t.string({ description: 'Title of the item.' }),
    summary: t.string({ description: 'Summary (content warning) of the item.' }),
    mimetype: t.string({ description: 'Media type of the body when not `text/bbcode`, e.g. `text/markdown`.' }),
    allowContacts: t.stringList({ description: 'Hashes of connections allowed to see the item (makes it private); each must be a connection of the channel.' }),
    denyContacts: t.stringList({ description: 'Hashes of connections denied the item; each must be a connection of the channel.' }),
    allowGroups: t.stringList({ description: 'Hashes of privacy groups allowed to see the item (makes it private); each must be a group of the channel.' }),
    denyGroups: t.stringList({ description: 'Hashes of privacy groups denied the item; each must be a group of the channel.' }),
    categories: t.stringList({ description: 'Categories of the item.' }),
    location: t.string({ description: 'Free-form location.' }),
    coordinates: t.string({ description: 'Geographic coordinates, `lat lon`.' }),
    expiresAt: t.field({ type: 'DateTime', description: 'Time the item expires (only where the hub enables expiry).' }),
    createdAt: t.field({ type: 'DateTime', description: 'Creation time of a new item, when not now (e.g. an import).' }),
    app: t.string({ description: 'Application name shown with the item (sent as `source`; the hub ignores `app`).' }),
    permalink: t.string({ description: "Permalink when not the hub's own (sent as `permalink`; the hub ignores `plink`)." }),
    commentsDisabled: t.boolean({ description: 'Disables comments on the item.' }),
    consensus: t.boolean({ description: 'Makes the item a consensus (voting) item.' }),
    activity: t.field({
      type: ChannelItemVerb,
      description: 'The activity of a new item, e.g. LIKE with parentRestId to like that item; a post when left out. An edit keeps the original activity.',
    }),
    objectType: t.field({
      type: ChannelItemObjectType,
      description:
        'The kind of object; note or comment when left out. The hub sets it on an edit too (an edit without it would make a comment a note): when left out, an edit sends the type again (a top item its own, a comment COMMENT, as item/full cannot read a comment by its id).',
    }),
    webpage: t.field({ type: ChannelItemWebpageInput, description: 'Makes a new item a web page or another design element.' }),
    messageId: t.string({
      description:
        "Identity of a new item, which makes a retry safe: Hubzilla stores it as the item's uuid, so the item's message id becomes `<hub>/item/<messageId>`, and a post repeating one already stored answers with that item instead of a second one. Use a fresh UUID per item; the gateway makes one when left out (it is in the error of a post that timed out).",
    }),
    remote: t.field({ type: ChannelItemRemoteInput, description: "The item's identity on another network or service." }),
    authorXchanHash: t.string({ description: 'Hash of the author when not the channel, e.g. for an imported item (`remote_xchan`).' }),
    origin: t.boolean({
      description: 'Whether the item counts as created on this hub, which decides whether the hub relays it (`origin`); true when left out.',
    }),
    media: t.field({
      type: 'File',
      description: 'A file to attach, sent with the GraphQL multipart request spec: an image is embedded in the body, another file attached.',
    }),
  }),
});

type PostInput = typeof ChannelItemPostInput.$inferInput;

const COMMENT_TYPE = `${ACTIVITY_SCHEMA}comment`;

/** xchan hashes (base64url) and group hashes (UUIDs) go into ACL strings: nothing else is sent. */
const ACL_VALUE = /^[A-Za-z0-9_=.-]{1,255}$/;

const given = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined;

function checkInput(input: PostInput): UserErrorShape[] {
  const errors: UserErrorShape[] = [];
  if (given(input.channel) && !isNickname(input.channel)) errors.push(inputError('channel', `"${input.channel.slice(0, 80)}" is not a channel nickname.`));
  if (input.body.trim() === '' && !input.media) errors.push(inputError('body', 'body must not be empty.', 'MISSING'));
  const parents = [input.parentRestId, input.parentMessageId].filter(given).length;
  if (parents > 1) errors.push(inputError('parentRestId', 'Give at most one of parentRestId or parentMessageId.'));
  if (parents > 0 && given(input.restId)) errors.push(inputError('restId', 'An edit (restId) cannot also name a parent.'));
  for (const field of ['allowContacts', 'denyContacts', 'allowGroups', 'denyGroups'] as const) {
    const bad = (input[field] ?? []).find((v) => !ACL_VALUE.test(v));
    if (bad !== undefined) errors.push(inputError(field, `"${bad.slice(0, 80)}" is not an xchan or group hash.`));
  }
  if (given(input.authorXchanHash) && !ACL_VALUE.test(input.authorXchanHash)) {
    errors.push(inputError('authorXchanHash', `"${input.authorXchanHash.slice(0, 80)}" is not an xchan hash.`));
  }
  const badCategory = (input.categories ?? []).find((c) => c.includes(',') || c.trim() === '');
  if (badCategory !== undefined) errors.push(inputError('categories', 'A category must not be empty or contain a comma.'));
  if (given(input.webpage) && !/^[\w.~-]{1,255}$/.test(input.webpage.name)) {
    errors.push(inputError('webpage', 'A page name is 1 to 255 letters, digits and `_ . ~ -`.'));
  }
  if (given(input.messageId) && input.messageId.trim() === '') errors.push(inputError('messageId', 'messageId must not be empty.'));
  if (given(input.messageId) && input.messageId.trim() !== '' && !MESSAGE_ID.test(input.messageId)) {
    errors.push(inputError('messageId', 'messageId is 1 to 191 characters without `<`, `>` or spaces (the hub strips tags and keeps it as the uuid).'));
  }
  const run = longestRun(input.body);
  if (run > MAX_UNBROKEN_RUN) {
    errors.push(
      inputError(
        'body',
        `body has ${run} characters without a space or line break; at most ${MAX_UNBROKEN_RUN} are sent, as Hubzilla's formatting of such a run takes time growing with the square of its length (60,000 took 77 s on a real hub). Break it up with spaces or line breaks.`,
      ),
    );
  }
  if (given(input.remote) && (input.remote.namespace.trim() === '' || input.remote.remoteId.trim() === '')) {
    errors.push(inputError('remote', 'namespace and remoteId must not be empty.', 'MISSING'));
  }
  const editOnly = given(input.restId) ? (['activity', 'webpage', 'createdAt', 'messageId', 'authorXchanHash'] as const).filter((f) => given(input[f])) : [];
  for (const field of editOnly) errors.push(inputError(field, `${field} applies to a new item; an edit keeps the original.`));
  return errors;
}

/**
 * The longest run without whitespace a body may have. Hubzilla's BBCode and
 * link formatting takes time growing with the square of such a run: on a
 * real 8.8.7 hub 10,000 characters took 3.5 s and 60,000 took 77 s (1 MB
 * held three PHP workers for 14 minutes, and the post was stored long after
 * the caller gave up). 5,000 costs under a second; prose and code never
 * come near it (a URL that long is such a run too, and is refused).
 */
export const MAX_UNBROKEN_RUN = 5_000;

/** Length of the longest run of characters without whitespace. */
function longestRun(text: string): number {
  let longest = 0;
  for (const match of text.matchAll(/\S+/g)) longest = Math.max(longest, match[0].length);
  return longest;
}

/** The channel to post in as the account spells it, or a user error: a channel of another account would be refused only after the write. */
async function postingChannel(nickname: string, ctx: Context): Promise<string | UserErrorShape> {
  return (
    (await accountNickname(ctx, nickname)) ?? {
      message: `"${nickname.slice(0, 80)}" is not a channel of this login's account.`,
      field: ['input', 'channel'],
      code: 'FORBIDDEN',
    }
  );
}

/** A message id the hub keeps as it is (strip_tags() would change one with `<`; the uuid column holds 191 characters). */
const MESSAGE_ID = /^[^\s<>]{1,191}$/;

/**
 * What item/update answers when it stored nothing although the item may be
 * there: item_store() found the message id stored already ("system error",
 * 10.x "duplicate post"), or suppress_duplicates cancelled a body equal to
 * one of the last two minutes ("operation cancelled", which comes before the
 * message id is looked at: Zotlabs/Module/Item.php).
 */
const REPEATED = /^(system error|duplicate post\.?|operation cancelled)$/i;
const CANCELLED = /^operation cancelled$/i;

/** Threads of the network stream read to find a repeated item whose thread item/full cannot name: the newest activity comes first. */
const RECENT_THREADS = 10;

/**
 * The item a post with `messageId` stored before, when there is one: the
 * hub keeps the id as the uuid, so the item is `<hub>/item/<messageId>`.
 * item/full finds a thread by its top item only, so a comment is looked for
 * in its parent's thread, and a reply to a reply (whose thread item/full
 * cannot name by the reply's id) in the threads of the newest activity,
 * where storing it put its thread.
 */
async function storedPost(input: PostInput, messageId: string, loaders: ChannelLoaders): Promise<{ record: ItemRecord; thread: ItemRecord[] } | null> {
  const channel = await loaders.info();
  const hub = channel?.url.replace(/\/channel\/[^/]*$/, '') ?? '';
  if (hub === '') return null;
  const mid = `${hub}/item/${messageId}`;
  const thread = given(input.parentRestId)
    ? await loaders.thread({ item_id: input.parentRestId })
    : given(input.parentMessageId)
      ? await loaders.thread({ mid: input.parentMessageId })
      : await loaders.thread({ mid });
  const record = thread?.find((i) => i.message_id === mid);
  if (thread && record) return { record, thread };
  if (!given(input.parentRestId) && !given(input.parentMessageId)) return null;
  const { items } = await loaders.client.listNetworkStream({}, { offset: 0, limit: RECENT_THREADS });
  const recent = items.find((thread) => thread.items.some((i) => i.message_id === mid));
  if (!recent) return null;
  // Stream records carry no numeric ids: the thread is read again whole from item/full, by its top's message id.
  const whole = await loaders.thread({ mid: recent.top.message_id });
  const found = whole?.find((i) => i.message_id === mid);
  return whole && found ? { record: found, thread: whole } : null;
}

/**
 * Whether an item found by a repeated message id is the one this post would
 * have made: by the channel (or the author the post names), at the same
 * place (a top item for a post, a comment for a comment). A copy the channel
 * received from another author has the same kind of message id and is not.
 */
function isOwnRepeat(input: PostInput, record: ItemRecord, channelUrl: string): boolean {
  const isComment = given(input.parentRestId) || given(input.parentMessageId);
  if (isComment === (record.message_id === record.message_top)) return false;
  return given(input.authorXchanHash) || record.author?.url === channelUrl;
}

/**
 * ACL lists may name only what the channel knows: its privacy groups (not
 * deleted) and its connections. Each list costs one call, only when given.
 */
async function unknownAclEntries(input: PostInput, loaders: ChannelLoaders): Promise<UserErrorShape[]> {
  const errors: UserErrorShape[] = [];
  const check = async (
    fields: readonly ('allowContacts' | 'denyContacts' | 'allowGroups' | 'denyGroups')[],
    known: () => Promise<Set<string>>,
    what: string,
  ) => {
    if (!fields.some((f) => (input[f] ?? []).length > 0)) return;
    const hashes = await known();
    for (const field of fields) {
      const unknown = (input[field] ?? []).filter((hash) => !hashes.has(hash));
      if (unknown.length > 0) {
        errors.push(
          inputError(field, `${unknown.map((h) => `"${h.slice(0, 80)}"`).join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not ${what} of this channel.`),
        );
      }
    }
  };
  await check(['allowGroups', 'denyGroups'], async () => new Set((await loaders.groups()).filter((g) => !g.deleted).map((g) => g.hash)), 'a privacy group');
  await check(['allowContacts', 'denyContacts'], async () => new Set((await loaders.connections()).map((c) => c.abook_xchan)), 'a connection');
  if (errors.length > 0) return errors;
  const nobody = await audienceIsNobody(input, loaders);
  return nobody ? [nobody] : [];
}

/**
 * A private item whose audience resolves to nobody reaches everybody: the
 * hub's `collect_recipients()` (include/items.php) expands the allowed groups
 * to their members, takes the denied ones away, and hands what is left to
 * `deliverable_abook_xchans()` (include/connections.php), which reads an
 * empty list as no filter and delivers to every connection. So an audience
 * of empty groups, of members who are no longer connections, or of only
 * those denied as well, is refused here, before the hub sees it. Costs one
 * call per group named.
 */
async function audienceIsNobody(input: PostInput, loaders: ChannelLoaders): Promise<UserErrorShape | null> {
  const allowContacts = input.allowContacts ?? [];
  const allowGroups = input.allowGroups ?? [];
  if (given(input.restId) || given(input.parentRestId) || given(input.parentMessageId)) return null;
  if (allowContacts.length === 0 && allowGroups.length === 0) return null;
  const groups = await loaders.groups();
  const membersOf = async (hashes: readonly string[]) => {
    const lists = await Promise.all(
      hashes.map(async (hash) => {
        const group = groups.find((g) => g.hash === hash);
        return group ? ((await loaders.members(group.id)) ?? []) : [];
      }),
    );
    return lists.flat().map((m) => m.xchan_hash);
  };
  const deliverable = new Set(
    (await loaders.connections()).filter((c) => !c.abook_self && !c.abook_pending && !c.abook_archived && !c.abook_blocked).map((c) => c.abook_xchan),
  );
  const denied = new Set([...(input.denyContacts ?? []), ...(await membersOf(input.denyGroups ?? []))]);
  const audience = [...allowContacts, ...(await membersOf(allowGroups))].filter((hash) => deliverable.has(hash) && !denied.has(hash));
  if (audience.length > 0) return null;
  return inputError(
    allowGroups.length > 0 ? 'allowGroups' : 'allowContacts',
    'Nobody would be allowed to see this item: the allowed groups have no members who are connections (or all of them are denied). Hubzilla delivers such an item to every connection, so it was not sent.',
  );
}

/** Categories of an item as the hub reports them (tags of type `category`). */
function categoriesOf(item: ItemRecord): string[] {
  return item.tags.filter((tag) => tag.type === 'category').map((tag) => tag.tag);
}

/**
 * For an edit that leaves out title, summary, categories or media type: the
 * item's current values, to send again; `{}` when nothing is left out or
 * item/full cannot find the item (a comment).
 */
async function keptOnEdit(input: PostInput, loaders: ChannelLoaders): Promise<Partial<ItemUpdateParams>> {
  if (!given(input.restId)) return {};
  const omitted = [input.title, input.summary, input.categories, input.mimetype, input.objectType].some((v) => v === undefined);
  if (!omitted) return {};
  const thread = await loaders.thread({ item_id: input.restId });
  const item = thread?.find((i) => i.id === input.restId);
  // item/full finds top items only: an item it does not find is a comment (or none, which the hub refuses anyway), and stays one.
  if (!item) return { obj_type: input.objectType === undefined ? COMMENT_TYPE : undefined };
  const categories = categoriesOf(item);
  return {
    title: input.title === undefined && item.title !== '' ? item.title : undefined,
    summary: input.summary === undefined && item.summary !== '' ? item.summary : undefined,
    category: input.categories === undefined && categories.length > 0 ? categories.join(',') : undefined,
    mimetype: input.mimetype === undefined ? item.mimetype : undefined,
    // The hub sets the object type of an edit from the form as for a new item: sent again, the item keeps it.
    obj_type: input.objectType === undefined && item.object_type !== '' ? item.object_type : undefined,
  };
}

function postParams(input: PostInput, kept: Partial<ItemUpdateParams>): ItemUpdateParams {
  const list = (values: readonly string[] | null | undefined) => (values && values.length > 0 ? values : undefined);
  return {
    body: input.body,
    title: input.title ?? kept.title,
    summary: input.summary ?? kept.summary,
    mimetype: input.mimetype ?? kept.mimetype,
    post_id: input.restId ?? undefined,
    parent: input.parentRestId ?? undefined,
    parent_mid: input.parentMessageId ?? undefined,
    contact_allow: list(input.allowContacts),
    contact_deny: list(input.denyContacts),
    group_allow: list(input.allowGroups),
    group_deny: list(input.denyGroups),
    category: input.categories?.length ? input.categories.join(',') : input.categories === undefined ? kept.category : undefined,
    location: input.location ?? undefined,
    coord: input.coordinates ?? undefined,
    expire: hubDate(input.expiresAt),
    created: hubDate(input.createdAt),
    source: input.app ?? undefined,
    permalink: input.permalink ?? undefined,
    nocomment: input.commentsDisabled ?? undefined,
    consensus: input.consensus ?? undefined,
    verb: input.activity ?? undefined,
    obj_type: input.objectType ?? kept.obj_type,
    webpage: input.webpage?.type,
    pagetitle: input.webpage?.name,
    layout_mid: input.webpage?.layoutMessageId ?? undefined,
    message_id: input.messageId ?? kept.message_id,
    namespace: input.remote?.namespace,
    remote_id: input.remote?.remoteId,
    remote_xchan: input.authorXchanHash ?? undefined,
    origin: input.origin ?? undefined,
  };
}

/** item/update's refusal messages (Zotlabs/Module/Item.php) as user errors. */
function refusal(message: string, input: PostInput): UserErrorShape {
  const text = `Hubzilla refused the item: ${message}.`;
  if (/no content/i.test(message)) return inputError('body', text, 'MISSING');
  if (/invalid post id/i.test(message)) return inputError(input.parentMessageId ? 'parentMessageId' : input.parentRestId ? 'parentRestId' : 'restId', text);
  if (/permission denied/i.test(message)) return { message: text, field: [], code: 'FORBIDDEN' };
  return { message: text, field: [], code: 'INVALID' };
}

/**
 * The answer to a post the hub stored nothing for although the item may be
 * there (REPEATED): the item stored before under this message id when it is
 * the caller's own repeat (a retry after a timeout, inside the duplicate
 * window or after it); else why nothing was stored.
 */
async function repeatAnswer(input: PostInput, messageId: string, message: string, channel: string | null, loaders: ChannelLoaders): Promise<PostPayloadShape> {
  const stored = await storedPost(input, messageId, loaders);
  const channelUrl = (await loaders.info())?.url ?? '';
  if (stored && isOwnRepeat(input, stored.record, channelUrl)) return { item: { record: stored.record, channel, thread: stored.thread }, errors: [] };
  const callerId = given(input.messageId);
  if (stored && callerId) {
    return {
      item: null,
      errors: [
        inputError(
          'messageId',
          'This messageId is the id of another item this channel holds (one it received from another author, or one at another place). Use a fresh messageId for a new item.',
          'TAKEN',
        ),
      ],
    };
  }
  if (callerId) {
    return {
      item: null,
      errors: [inputError('messageId', `Hubzilla stored nothing: ${message}. An item with this messageId may exist that this channel cannot read.`, 'TAKEN')],
    };
  }
  if (CANCELLED.test(message)) {
    return {
      item: null,
      errors: [
        inputError(
          'body',
          'Hubzilla refuses an item whose text equals that of an item this channel posted or received in the last two minutes (its "suppress duplicates" feature). Change the text, or post it again after two minutes.',
          'CONFLICT',
        ),
      ],
    };
  }
  return { item: null, errors: [refusal(`${message} (it stored nothing; a comment on an item whose comments are closed is answered so)`, input)] };
}

builder.mutationFields((t) => ({
  channelItemPost: t.field({
    type: ChannelItemPostPayload,
    nullable: true,
    // The write, the read that fills the payload, the account's channels, the ACL lists and groups' members, a read of the item edited, or a repeat's four reads.
    complexity: 8,
    description:
      'Creates a post, comments on an item, posts an activity (a like, a vote, an RSVP), creates a web page, or edits an item of a Hubzilla channel (`item/update`).',
    args: { input: t.arg({ type: ChannelItemPostInput, required: true, description: 'The item.' }) },
    resolve: async (_root, { input }, ctx) => {
      const errors = checkInput(input);
      if (errors.length > 0) return { item: null, errors };
      const picked = given(input.channel) ? await postingChannel(input.channel, ctx) : null;
      if (picked !== null && typeof picked !== 'string') return { item: null, errors: [picked] };
      const channel = picked;
      const loaders = channelLoaders(ctx, channel);
      const media = input.media ? { file: input.media, filename: input.media.name || 'upload' } : undefined;
      // Every new item gets a message id, so that one whose answer never came can be retried without a second copy.
      const isNew = !given(input.restId) && !given(input.remote);
      const messageId = isNew ? (input.messageId ?? randomUUID()) : null;
      try {
        const aclErrors = await unknownAclEntries(input, loaders);
        if (aclErrors.length > 0) return { item: null, errors: aclErrors };
        const kept = { ...(await keptOnEdit(input, loaders)), message_id: messageId ?? undefined };
        const result = await loaders.client.updateItem(postParams(input, kept), media);
        if (result.item) return { item: { record: result.item, channel }, errors: [] };
        // Hubzilla 10 may answer with the web UI's {success, id}: read the item back.
        const thread = result.item_id === null ? null : await loaders.thread({ item_id: result.item_id });
        const record = thread?.find((i) => i.id === result.item_id) ?? null;
        return { item: record ? { record, channel, thread: thread ?? undefined } : null, errors: [] };
      } catch (error) {
        if (error instanceof ItemUpdateRefused && messageId !== null && REPEATED.test(error.message)) {
          return repeatAnswer(input, messageId, error.message, channel, loaders);
        }
        if (error instanceof ItemUpdateRefused) return { item: null, errors: [refusal(error.message, input)] };
        if (error instanceof UpstreamError && error.mayHaveBeenApplied && messageId !== null) error.retryWith = { messageId };
        // An edit of an item the channel does not have is the caller's to fix, like every other refusal of the hub.
        if (error instanceof UpstreamError && error.code === 'NOT_FOUND' && given(input.restId)) {
          return { item: null, errors: [inputError('restId', 'Hubzilla has no item with that id to edit in this channel.', 'INVALID')] };
        }
        throw error;
      }
    },
  }),
}));
