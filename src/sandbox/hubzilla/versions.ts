/**
 * The Hubzilla releases the sandbox can play, and what differs between them
 * in what the API returns. 8.8 is Hubzilla 8.8.7 as captured
 * (test/fixtures/hubzilla-captures); 10 is the 10.x line as its code reads
 * (HomeLabHD/hubzilla-core, STD_VERSION 10.3.43): ActivityStreams 2 verbs and
 * object types for new items, an `Add` item beside every post and comment
 * in the channel's own threads, encryption keys on channels and xchans, and
 * item/update reading the form body only (test/fixtures/hubzilla-10).
 */
export const HUBZILLA_VERSIONS = ['8.8', '10'] as const;
export type HubzillaVersion = (typeof HUBZILLA_VERSIONS)[number];

/** What `version` answers. */
export const VERSION_STRING: Record<HubzillaVersion, string> = { '8.8': '8.8.7', '10': '10.3.43' };

/** What the channel export's `compatibility` block says. */
export const COMPATIBILITY: Record<HubzillaVersion, { version: string; database: number }> = {
  '8.8': { version: '8.8.7', database: 1259 },
  '10': { version: '10.3.43', database: 1263 },
};

const AS1 = 'http://activitystrea.ms/schema/1.0/';

/** The verb and object type a new item gets when the form sends none (Zotlabs/Module/Item.php). */
export function defaultVocabulary(version: HubzillaVersion, comment: boolean): { verb: string; obj_type: string } {
  if (version === '10') return { verb: 'Create', obj_type: 'Note' };
  return { verb: `${AS1}post`, obj_type: `${AS1}${comment ? 'comment' : 'note'}` };
}

/** True when the release stores an `Add` item beside each post and comment of the channel's own threads. */
export function storesAddItems(version: HubzillaVersion): boolean {
  return version === '10';
}

/** True when the release puts an uploaded file's link before the body text (10.x `zot_item_update()`), not after it. */
export function mediaFirst(version: HubzillaVersion): boolean {
  return version === '10';
}

/** True when item/update reads only the form body: a query string's fields are ignored (10.x sets `$_POST`). */
export function formBodyOnly(version: HubzillaVersion): boolean {
  return version === '10';
}

/** True when channels and xchans carry encryption keys (`channel_epubkey`/`channel_eprvkey`, `xchan_epubkey`) and `xchan_updated`. */
export function hasEncryptionKeys(version: HubzillaVersion): boolean {
  return version === '10';
}

/** Reads a version name: `8.8`, `10`, or a full release number of either line (`8.8.7`, `10.6`). */
export function parseHubzillaVersion(text: string): HubzillaVersion | null {
  const match = /^(\d+)(?:\.(\d+))?(?:\.\d+)?$/.exec(text.trim());
  if (!match) return null;
  const major = Number(match[1]);
  if (major === 8 && (match[2] === undefined || match[2] === '8')) return '8.8';
  if (major === 10) return '10';
  return null;
}
