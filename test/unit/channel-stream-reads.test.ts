/**
 * Reading channel/stream on past zot_feed()'s 201 threads (loaders.ts), with
 * a client that answers each read as the hub would for a channel with more
 * threads than any read returns: what the next read asks for, and `cut`
 * when STREAM_READS reads did not reach the end.
 */
import { describe, expect, it } from 'vitest';
import type { HubzillaClient } from '../../src/upstreams/hubzilla/client.js';
import { ChannelLoaders, STREAM_READS } from '../../src/upstreams/hubzilla/loaders.js';
import type { ItemRecord } from '../../src/upstreams/hubzilla/records.js';

/** Thread n: one top item created at second n after 2026-11-01 00:00:00. */
function thread(n: number): ItemRecord {
  const mid = `https://hub.test/item/t${n}`;
  const created = new Date(Date.UTC(2026, 10, 1) + n * 1000).toISOString();
  return { message_id: mid, message_top: mid, created } as ItemRecord;
}

/** A hub with `total` threads, one a second: each read keeps the 201 oldest created after `mindate`. */
function hubWith(total: number): { client: HubzillaClient; asked: (string | null)[] } {
  const asked: (string | null)[] = [];
  const client = {
    listChannelStream: async (mindate: string | null) => {
      asked.push(mindate);
      const after = mindate === null ? -1 : (Date.parse(`${mindate.replace(' ', 'T')}Z`) - Date.UTC(2026, 10, 1)) / 1000;
      return Array.from({ length: total }, (_, n) => n)
        .filter((n) => n > after)
        .slice(0, 201)
        .map(thread);
    },
  } as unknown as HubzillaClient;
  return { client, asked };
}

describe('channel/stream past the hub cut', () => {
  it('reads on from a second before the last thread, each thread once, and ends uncut', async () => {
    const { client, asked } = hubWith(450);
    const { items, cut } = await new ChannelLoaders(client).stream(null);
    expect(cut).toBe(false);
    expect(items.map((i) => i.message_id)).toEqual(Array.from({ length: 450 }, (_, n) => `https://hub.test/item/t${n}`));
    // Thread 200 was the last of the first read (created at second 200): the next starts a second before it.
    expect(asked).toEqual([null, '2026-11-01 00:03:19', '2026-11-01 00:06:39']);
  });

  it('says cut when STREAM_READS reads do not reach the end, and reads no more', async () => {
    const { client, asked } = hubWith(5_000);
    const { items, cut } = await new ChannelLoaders(client).stream(null);
    expect(cut).toBe(true);
    expect(asked).toHaveLength(STREAM_READS);
    // 201 threads a read, the last thread of each read again in the next.
    expect(items).toHaveLength(201 + (STREAM_READS - 1) * 200);
  });
});
