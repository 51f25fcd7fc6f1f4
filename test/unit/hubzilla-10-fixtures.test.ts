/**
 * The shapes Hubzilla 10.x answers with (test/fixtures/hubzilla-10, each
 * written from the hub's code at the commit its `_source` names) fed
 * through the client: each must read as the gateway promises. A fixture
 * without an expectation fails.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type HubzillaClient, ItemUpdateRefused } from '../../src/upstreams/hubzilla/client.js';
import { stripSecrets } from '../../src/upstreams/hubzilla/normalise.js';
import { activityType, bodyImages, bodyText, objectKind } from '../../src/upstreams/hubzilla/vocabulary.js';
import { cannedHubzillaClient } from '../helpers/hubzilla-client.js';

const DIR = new URL('../fixtures/hubzilla-10/', import.meta.url);

interface Fixture {
  _source: { repo: string; files: { path: string; commit: string }[]; note: string };
  status: number;
  body: unknown;
}

const load = (name: string): Fixture => JSON.parse(readFileSync(new URL(name, DIR), 'utf8')) as Fixture;

/** A client whose one upstream answer is the fixture. */
function clientFor(name: string): HubzillaClient {
  const fixture = load(name);
  return cannedHubzillaClient(fixture.status, JSON.stringify(fixture.body));
}

const CHECKS: Record<string, () => Promise<void>> = {
  'verify.json': async () => {
    const channel = await clientFor('verify.json').getChannel();
    expect(channel).toMatchObject({ channel_address: 'tester', url: 'https://hub.example.org/channel/tester' });
    expect(JSON.stringify(channel)).not.toMatch(/SENTINEL|prvkey/);
    // The export's filter drops channel_eprvkey by its name, as it drops channel_prvkey.
    const stripped = JSON.stringify(stripSecrets(load('verify.json').body));
    expect(stripped).not.toContain('SENTINEL');
    expect(stripped).toContain('channel_epubkey');
  },
  'xchan.json': async () => {
    const xchan = await clientFor('xchan.json').getXchan('address', 'alice@hub.example.org');
    expect(xchan).toMatchObject({ address: 'alice@hub.example.org', name: 'Alice Ünïcode ✓', updated: '2026-11-25T06:00:00.000Z' });
  },
  'abook.json': async () => {
    const [connection] = await clientFor('abook.json').listConnections();
    expect(connection?.abook_id).toBe(3_000_000_005);
    expect(connection?.xchan).toMatchObject({ address: 'alice@hub.example.org', updated: '2026-11-25T06:00:00.000Z' });
  },
  'item_update.json': async () => {
    const result = await clientFor('item_update.json').updateItem({ body: 'with a picture', message_id: '6f1c2b9e-7d3a-4c21-9e0f-2a5b8c7d1e43' });
    expect(result.item_id).toBe(3_000_000_001);
    const item = result.item;
    expect(item).toMatchObject({ verb: 'Create', object_type: 'Note', uuid: '6f1c2b9e-7d3a-4c21-9e0f-2a5b8c7d1e43' });
    expect(item?.message_id).toBe('https://hub.example.org/item/6f1c2b9e-7d3a-4c21-9e0f-2a5b8c7d1e43');
    // The photo's link comes first on 10.x: the text and the image read as 8.8's.
    expect(bodyText(item?.body ?? '')).toBe('with a picture');
    expect(bodyImages(item?.body ?? '')).toEqual([
      { url: 'https://hub.example.org/photo/9c1d-2.png', link: 'https://hub.example.org/photos/tester/image/9c1d', name: 'pic.png' },
    ]);
  },
  'item_update_repeat.json': async () => {
    await expect(clientFor('item_update_repeat.json').updateItem({ body: 'again', message_id: 'x' })).rejects.toEqual(new ItemUpdateRefused('system error'));
  },
  'channel_stream.json': async () => {
    const items = await clientFor('channel_stream.json').listChannelStream(null);
    // Five activities sent, two of them Add items: three items read.
    expect(items.map((i) => i.body)).toEqual(['written before the upgrade', expect.stringContaining('with a picture'), 'a 10.x comment']);
    expect(items.map((i) => i.verb)).toEqual(['http://activitystrea.ms/schema/1.0/post', 'Create', 'Create']);
    expect(items.map((i) => [activityType(i.verb), objectKind(i.object_type)])).toEqual([
      ['POST', 'NOTE'],
      ['POST', 'NOTE'],
      ['POST', 'NOTE'],
    ]);
  },
};

describe('Hubzilla 10.x shapes', () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));

  it('has an expectation for every fixture, and every fixture names the code it was written from', () => {
    expect(files.sort()).toEqual(Object.keys(CHECKS).sort());
    for (const file of files) {
      const { _source } = load(file);
      expect(_source.repo).toBe('HomeLabHD/hubzilla-core');
      for (const source of _source.files) expect(source.commit).toMatch(/^[0-9a-f]{40}$/);
    }
  });

  it.each(Object.keys(CHECKS))('reads %s', async (name) => {
    await CHECKS[name]?.();
  });
});
