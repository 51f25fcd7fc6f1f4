/**
 * One gateway for Hubzilla 8.8 and the 10.x line: the sandbox playing each
 * (src/sandbox/hubzilla/versions.ts), side by side. The `Add` items 10.x
 * stores beside each post never show; `activityType` and `objectKind` read
 * the same over both vocabularies; the encryption private key 10.x adds to
 * verify and the export never leaves the gateway. And writes a caller can
 * retry: a post repeating a stored messageId is that item, a post whose
 * answer never came says it may have been applied and how to retry it, and a
 * body the hub would choke on is refused before it is sent.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTestApp, type GraphQLResponse, type TestApp } from '../helpers/app.js';

const DEMO = `Basic ${Buffer.from('demo:demo-pass').toString('base64')}`;

// biome-ignore lint/suspicious/noExplicitAny: results are read by path, as a client reads JSON.
type Data = any;

interface StreamItem {
  uuid: string;
  verb: string;
  objectType: string;
  activityType: string;
  objectKind: string;
  isComment: boolean;
  body: string;
}

const STREAM = `{ channel { stream(since: "2026-01-01T00:00:00Z", first: 100) { totalCount
  nodes { uuid verb objectType activityType objectKind isComment body } } } }`;

const POST = `mutation($input: ChannelItemPostInput!) { channelItemPost(input: $input) {
  item { restId uuid messageId body isComment } errors { message field code } } }`;

function hz(t: TestApp, query: string, variables: Record<string, unknown> = {}): Promise<GraphQLResponse<Data>> {
  return t.gql<Data>(query, variables, { headers: { 'x-hubzilla-authorization': DEMO } });
}

async function stream(t: TestApp): Promise<StreamItem[]> {
  const r = await hz(t, STREAM);
  expect(r.errors).toBeUndefined();
  return r.data.channel.stream.nodes;
}

describe('the same graph over Hubzilla 8.8 and 10', () => {
  let old: TestApp;
  let current: TestApp;
  beforeAll(async () => {
    old = await createTestApp({ hubzillaSandbox: { version: '8.8' } });
    current = await createTestApp({ hubzillaSandbox: { version: '10' } });
  });
  afterAll(async () => {
    await old.close();
    await current.close();
  });

  it("leaves out 10.x's Add items: the same items, none an empty comment, though the hub sends them", async () => {
    const [before, after] = [await stream(old), await stream(current)];
    expect(after.map((i) => i.uuid)).toEqual(before.map((i) => i.uuid));
    expect(after.filter((i) => i.body === '' || i.verb === 'Add')).toEqual([]);
    // The hub does send them: the raw stream of the 10.x sandbox holds one Add per post and comment since the upgrade.
    const raw = await fetch(new URL('/api/z/1.0/channel/stream?mindate=2026-01-01', current.hubzilla.url), { headers: { authorization: DEMO } });
    const items = (await raw.json()) as { verb: string; body: string }[];
    const adds = items.filter((i) => i.verb === 'Add');
    expect(adds.length).toBeGreaterThan(5);
    expect(adds.every((i) => i.body === '')).toBe(true);
    expect(items.length).toBe(after.length + adds.length);
  });

  it('reads both vocabularies with one meaning: verb and objectType raw, activityType and objectKind the same', async () => {
    const [before, after] = [await stream(old), await stream(current)];
    const meaning = (i: StreamItem) => [i.uuid, i.activityType, i.objectKind, i.isComment];
    expect(after.map(meaning)).toEqual(before.map(meaning));
    // One 10.x stream mixes both: items since the upgrade in AS2 names, older ones in 8.8's URIs.
    expect(new Set(after.map((i) => i.verb))).toEqual(new Set(['Create', 'http://activitystrea.ms/schema/1.0/post']));
    expect(after.filter((i) => i.isComment).map((i) => i.objectType)).toEqual(expect.arrayContaining(['Note', 'http://activitystrea.ms/schema/1.0/comment']));
    expect(new Set(after.map((i) => `${i.activityType} ${i.objectKind}`))).toEqual(new Set(['POST NOTE']));
  });

  it("never passes on 10.x's channel_eprvkey: not in the channel, not in the export", async () => {
    const raw = await fetch(new URL('/api/z/1.0/verify', current.hubzilla.url), { headers: { authorization: DEMO } });
    expect(await raw.text()).toContain('SENTINEL-eprvkey-demo');
    const r = await hz(current, '{ channel { nickname name exports: export(sections: [CHANNEL, CONNECTIONS]) } }');
    expect(r.errors).toBeUndefined();
    const text = JSON.stringify(r.data);
    expect(r.data.channel.nickname).toBe('demo');
    expect(text).toContain('channel_epubkey');
    expect(text).not.toContain('SENTINEL');
    expect(text).not.toMatch(/eprvkey/);
  });

  it('posts the same way on both: a new item reads as a post, whatever verb the hub stored', async () => {
    for (const [t, verb] of [
      [old, 'http://activitystrea.ms/schema/1.0/post'],
      [current, 'Create'],
    ] as const) {
      const r = await hz(t, 'mutation { channelItemPost(input: { body: "both hubs" }) { item { verb activityType objectKind } errors { message } } }');
      expect(r.data.channelItemPost).toEqual({ item: { verb, activityType: 'POST', objectKind: 'NOTE' }, errors: [] });
    }
  });
});

describe.each(['8.8', '10'] as const)('writes a caller can retry, on Hubzilla %s', (version) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ hubzillaSandbox: { version } });
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => {
    t.hubzilla.clearFaults();
    t.resetHubzillaCalls();
  });

  it('answers a post repeating a stored messageId with that item: one item, not two', async () => {
    const input = { body: 'posted once, sent twice', messageId: `retry-${version}-1` };
    const first = await hz(t, POST, { input });
    expect(first.data.channelItemPost.errors).toEqual([]);
    const again = await hz(t, POST, { input });
    expect(again.data.channelItemPost).toEqual(first.data.channelItemPost);
    expect(first.data.channelItemPost.item.messageId).toBe(`https://hub.duograph.test/item/retry-${version}-1`);
    expect((await stream(t)).filter((i) => i.uuid === input.messageId)).toHaveLength(1);
    // The repeat cost the refused write, the channel's address (verify) and the thread (item/full).
    expect(t.hubzillaCalls().map((c) => c.path.replace('/api/z/1.0/', ''))).toEqual(['item/update', 'item/update', 'verify', 'item/full', 'channel/stream']);
  });

  it('says so when the hub refuses a repeated messageId and its item cannot be read', async () => {
    const input = { body: 'posted once, hidden after', messageId: `retry-${version}-hidden` };
    expect((await hz(t, POST, { input })).data.channelItemPost.errors).toEqual([]);
    // The stored item is out of this login's reach now (item/full answers nothing).
    t.hubzilla.addFault({ path: /item\/full/, status: 200, body: '[]', headers: { 'content-type': 'application/json' } });
    const taken = (answer: string) => ({
      item: null,
      errors: [
        {
          message: expect.stringMatching(new RegExp(`^Hubzilla stored nothing: ${answer}\\. An item with this messageId may exist`)),
          field: ['input', 'messageId'],
          code: 'TAKEN',
        },
      ],
    });
    // Inside the hub's two minutes for identical text it cancels the post before looking at the id; after them item_store() finds the id.
    expect((await hz(t, POST, { input })).data.channelItemPost).toEqual(taken('operation cancelled'));
    t.hubzilla.advanceClock(121);
    expect((await hz(t, POST, { input })).data.channelItemPost).toEqual(taken('system error'));
    t.hubzilla.clearFaults();
  });

  it('finds a repeated comment in its parent thread', async () => {
    const top = await hz(t, POST, { input: { body: 'a thread to comment on' } });
    const parentRestId = top.data.channelItemPost.item.restId;
    const input = { body: 'a comment sent twice', parentRestId, messageId: `retry-${version}-comment` };
    const first = await hz(t, POST, { input });
    const again = await hz(t, POST, { input });
    expect(again.data.channelItemPost).toEqual(first.data.channelItemPost);
    expect(first.data.channelItemPost.item).toMatchObject({ isComment: true, uuid: input.messageId });
  });

  it('says a post whose answer never came may have been applied, with the messageId that makes its retry safe', async () => {
    // A deadline of its own: the gateway gives up on the held post after 2 s (the hub is held until the test lets go, not timed).
    const slow = await createTestApp({ hubzillaSandbox: { version }, env: { UPSTREAM_TIMEOUT_MS: '2000' } });
    try {
      await retriesAfterTimeout(slow);
    } finally {
      await slow.close();
    }
  });

  async function retriesAfterTimeout(t: TestApp): Promise<void> {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    // The hub takes the post and stores it only after the gateway gave up, as a slow real hub does.
    t.hubzilla.addFault({ path: /item\/update/, until: held, serve: true, times: 1 });
    const r = await hz(t, POST, { input: { body: 'slow to store' } });
    expect(r.data?.channelItemPost ?? null).toBeNull();
    const error = r.errors?.[0];
    expect(error?.extensions).toMatchObject({ code: 'UPSTREAM_TIMEOUT', mayHaveBeenApplied: true, retryWith: { messageId: expect.any(String) } });
    expect(error?.message).toMatch(/may have been applied/);
    const messageId = String((error?.extensions?.retryWith as { messageId?: string } | undefined)?.messageId);
    // What the gateway sent under that id is what the caller may send again.
    expect(new URLSearchParams(t.hubzillaCalls({ path: 'item/update' })[0]?.body).get('message_id')).toBe(messageId);
    release();
    await vi.waitFor(async () => expect((await stream(t)).some((i) => i.uuid === messageId)).toBe(true), { timeout: 10_000, interval: 50 });
    const retry = await hz(t, POST, { input: { body: 'slow to store', messageId } });
    expect(retry.data.channelItemPost).toMatchObject({ item: { uuid: messageId, body: 'slow to store' }, errors: [] });
    expect((await stream(t)).filter((i) => i.uuid === messageId)).toHaveLength(1);
  }

  it('refuses a messageId the hub would change (spaces, tags) before sending it', async () => {
    const r = await hz(t, POST, { input: { body: 'x', messageId: 'has <b>tags</b> and spaces' } });
    expect(r.data.channelItemPost.errors).toEqual([
      { message: expect.stringMatching(/^messageId is 1 to 191 characters/), field: ['input', 'messageId'], code: 'INVALID' },
    ]);
    expect(t.hubzillaCalls()).toHaveLength(0);
  });

  it('refuses a body with a run of more than 5,000 characters without whitespace before sending it, and sends long prose', async () => {
    const refused = await hz(t, POST, { input: { body: `see ${'x'.repeat(5_001)} there` } });
    expect(refused.data.channelItemPost).toEqual({
      item: null,
      errors: [
        {
          message: expect.stringMatching(/^body has 5001 characters without a space or line break; at most 5000 are sent/),
          field: ['input', 'body'],
          code: 'INVALID',
        },
      ],
    });
    expect(t.hubzillaCalls({ path: 'item/update' })).toHaveLength(0);
    const longest = await hz(t, POST, { input: { body: `${'y'.repeat(5_000)}\n${'a long line of prose '.repeat(5_000)}` } });
    expect(longest.data.channelItemPost.errors).toEqual([]);
  });
});
