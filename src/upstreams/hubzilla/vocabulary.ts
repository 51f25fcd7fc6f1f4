/**
 * One meaning for both of Hubzilla's vocabularies: 8.8 writes activity
 * streams 1 URIs (`http://activitystrea.ms/schema/1.0/post`, `…/note`,
 * `…/comment`), 10.x ActivityStreams 2 names (`Create`, `Note`) for new
 * items while old items keep theirs, so one stream mixes both. Also the
 * image links Hubzilla adds to the body of a post with uploaded media: after
 * the text on 8.8, before it on 10.x. Pure: no I/O.
 */

const AS1 = 'http://activitystrea.ms/schema/1.0/';
const ZOT = 'http://purl.org/zot/activity/';

export const ACTIVITY_TYPES = [
  'POST',
  'UPDATE',
  'DELETE',
  'LIKE',
  'DISLIKE',
  'SHARE',
  'FOLLOW',
  'AGREE',
  'DISAGREE',
  'ABSTAIN',
  'ATTEND_YES',
  'ATTEND_NO',
  'ATTEND_MAYBE',
  'FAVORITE',
  'OTHER',
] as const;
export type ActivityType = (typeof ACTIVITY_TYPES)[number];

const VERBS = new Map<string, ActivityType>([
  [`${AS1}post`, 'POST'],
  ['Create', 'POST'],
  [`${AS1}update`, 'UPDATE'],
  ['Update', 'UPDATE'],
  [`${AS1}delete`, 'DELETE'],
  ['Delete', 'DELETE'],
  [`${AS1}like`, 'LIKE'],
  ['Like', 'LIKE'],
  [`${ZOT}dislike`, 'DISLIKE'],
  ['Dislike', 'DISLIKE'],
  [`${AS1}share`, 'SHARE'],
  ['Announce', 'SHARE'],
  [`${AS1}follow`, 'FOLLOW'],
  ['Follow', 'FOLLOW'],
  [`${ZOT}agree`, 'AGREE'],
  [`${ZOT}disagree`, 'DISAGREE'],
  [`${ZOT}abstain`, 'ABSTAIN'],
  [`${ZOT}attendyes`, 'ATTEND_YES'],
  ['Accept', 'ATTEND_YES'],
  [`${ZOT}attendno`, 'ATTEND_NO'],
  ['Reject', 'ATTEND_NO'],
  [`${ZOT}attendmaybe`, 'ATTEND_MAYBE'],
  ['TentativeAccept', 'ATTEND_MAYBE'],
  [`${AS1}favorite`, 'FAVORITE'],
]);

/** What an item's verb means, whichever vocabulary wrote it; OTHER for one not mapped here. */
export function activityType(verb: string): ActivityType {
  return VERBS.get(verb) ?? 'OTHER';
}

export const OBJECT_KINDS = ['NOTE', 'ARTICLE', 'PHOTO', 'EVENT', 'QUESTION', 'PERSON', 'OTHER'] as const;
export type ObjectKind = (typeof OBJECT_KINDS)[number];

const OBJECTS = new Map<string, ObjectKind>([
  [`${AS1}note`, 'NOTE'],
  [`${AS1}comment`, 'NOTE'],
  ['Note', 'NOTE'],
  [`${AS1}article`, 'ARTICLE'],
  ['Article', 'ARTICLE'],
  [`${AS1}photo`, 'PHOTO'],
  ['Image', 'PHOTO'],
  [`${AS1}event`, 'EVENT'],
  ['Event', 'EVENT'],
  ['Question', 'QUESTION'],
  [`${AS1}person`, 'PERSON'],
  ['Person', 'PERSON'],
]);

/** What kind of object an item is, whichever vocabulary wrote it: 8.8's `…/note` and `…/comment` and 10.x's `Note` are all NOTE. */
export function objectKind(objectType: string): ObjectKind {
  return OBJECTS.get(objectType) ?? 'OTHER';
}

/** An image the body links: `[zmg=url]name[/zmg]`, or `[zmg]url[/zmg]`, possibly inside `[zrl=link]…[/zrl]` (or `[url=…]`). */
export interface BodyImage {
  url: string;
  link: string | null;
  name: string;
}

const IMAGE = /(?:\[(?:zrl|url)=([^\]]*)\])?\[(?:zmg|img)(?:=([^\]]*))?\]([^[]*)\[\/(?:zmg|img)\](?:\[\/(?:zrl|url)\])?/g;

/** Every image the body links, in order. */
export function bodyImages(body: string): BodyImage[] {
  return [...body.matchAll(IMAGE)].map((m) => {
    const [, link, attr, inner] = m;
    const url = attr ?? (inner ?? '').trim();
    return { url, link: link ?? null, name: attr ? (inner ?? '') : '' };
  });
}

/** Image links, and the whitespace around them, at the start or end of a body: where Hubzilla puts an uploaded medium's link. */
const LEADING = new RegExp(`^(?:\\s*${IMAGE.source})+\\s*`);
const TRAILING = new RegExp(`\\s*(?:${IMAGE.source}\\s*)+$`);

/** The body without the image links at its start or end (8.8 appends an upload's link, 10.x prepends it); links inside the text stay. */
export function bodyText(body: string): string {
  return body.replace(LEADING, '').replace(TRAILING, '').trim();
}
