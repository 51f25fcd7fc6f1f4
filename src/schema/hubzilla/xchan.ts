/**
 * Xchan, Hubzilla's portable global identity of a channel (here or on any
 * other hub or network), and `Query.xchan`. An xchan often arrives as the
 * summary an activity embeds (`author{}`/`owner{}`: name, address, url,
 * network, photo, guid, key): fields the summary holds cost nothing, the
 * rest come from one `xchan` lookup per identity per request.
 */
import { InputError } from '../../errors.js';
import type { XchanKey } from '../../upstreams/hubzilla/client.js';
import type { XchanRecord, XchanSummary } from '../../upstreams/hubzilla/records.js';
import { builder } from '../builder.js';
import { UPSTREAM_CALL } from '../cost.js';
import type { Context } from '../context.js';

/** An xchan as far as it is known: a full record, an embedded summary, or only a key. */
export interface XchanModel {
  record?: XchanRecord;
  summary?: XchanSummary;
  hash?: string;
}

export const Xchan = builder.objectRef<XchanModel>('Xchan');

/** The full record: from the model, else looked up by hash, guid or address (deduplicated per request). */
export async function fullXchan(model: XchanModel, ctx: Context): Promise<XchanRecord | null> {
  if (model.record) return model.record;
  const keys: [XchanKey, string | undefined][] = [
    ['hash', model.hash],
    ['guid', model.summary?.guid],
    ['address', model.summary?.address],
  ];
  for (const [key, value] of keys) {
    if (!value) continue;
    try {
      return await ctx.hubzilla.loaders.xchan(key, value);
    } catch (error) {
      // A value the hub sent that is unsafe to send back: try the next key.
      if (!(error instanceof InputError)) throw error;
    }
  }
  return null;
}

/** A model for an xchan known by hash only. */
export function xchanByHash(hash: string | null | undefined): XchanModel | null {
  return hash ? { hash } : null;
}

builder.node(Xchan, {
  description: 'A global channel identity (xchan): a channel on this hub or any other hub or network, as this hub knows it.',
  id: {
    resolve: async (x, _args, ctx) => x.record?.hash ?? x.hash ?? (await fullXchan(x, ctx))?.hash ?? '',
  },
  loadOne: (hash, ctx) => ctx.hubzilla.loaders.xchan('hash', hash).then((record) => (record ? { record } : null)),
  fields: (t) => {
    /** A field the embedded summary may already hold. */
    const summarised = (pick: (s: XchanSummary) => string, full: (r: XchanRecord) => string, description: string) =>
      t.string({
        nullable: true,
        description,
        resolve: async (x, _args, ctx) => {
          if (x.record) return full(x.record);
          if (x.summary) return pick(x.summary);
          const record = await fullXchan(x, ctx);
          return record ? full(record) : null;
        },
      });
    const text = (pick: (r: XchanRecord) => string | null, description: string) =>
      t.string({
        nullable: true,
        description,
        resolve: async (x, _args, ctx) => {
          const r = await fullXchan(x, ctx);
          return r ? pick(r) : null;
        },
      });
    const bool = (pick: (r: XchanRecord) => boolean, description: string) =>
      t.boolean({
        nullable: true,
        description,
        resolve: async (x, _args, ctx) => {
          const r = await fullXchan(x, ctx);
          return r ? pick(r) : null;
        },
      });
    const time = (pick: (r: XchanRecord) => string | null, description: string) =>
      t.field({
        type: 'DateTime',
        nullable: true,
        description,
        resolve: async (x, _args, ctx) => {
          const r = await fullXchan(x, ctx);
          return r ? pick(r) : null;
        },
      });
    return {
      hash: t.string({
        nullable: true,
        description: 'Portable hash of the identity (86 base64url characters on current hubs).',
        resolve: async (x, _args, ctx) => x.record?.hash ?? x.hash ?? (await fullXchan(x, ctx))?.hash ?? null,
      }),
      guid: summarised(
        (s) => s.guid,
        (r) => r.guid,
        'Globally unique id of the identity.',
      ),
      guidSignature: summarised(
        (s) => s.guid_sig,
        (r) => r.guid_sig,
        "Signature of the guid by the identity's key.",
      ),
      publicKey: summarised(
        (s) => s.pubkey,
        (r) => r.pubkey,
        'Public key of the identity (PEM).',
      ),
      name: summarised(
        (s) => s.name,
        (r) => r.name,
        'Display name of the identity.',
      ),
      address: summarised(
        (s) => s.address,
        (r) => r.address,
        'Address of the identity, `nick@host`.',
      ),
      url: summarised(
        (s) => s.url,
        (r) => r.url,
        "URL of the identity's channel page.",
      ),
      network: summarised(
        (s) => s.network,
        (r) => r.network,
        'Network of the identity, e.g. `zot6` or `activitypub`.',
      ),
      photoMimetype: summarised(
        (s) => s.photo_mimetype,
        (r) => r.photo_mimetype,
        'Media type of the profile photo.',
      ),
      photoMedium: summarised(
        (s) => s.photo_src,
        (r) => r.photo_m,
        'URL of the medium profile photo (80 px).',
      ),
      photoLarge: text((r) => r.photo_l, 'URL of the large profile photo (300 px).'),
      photoSmall: text((r) => r.photo_s, 'URL of the small profile photo (48 px).'),
      connectionsUrl: text((r) => r.connurl, "URL of the identity's public connections list (`connurl`)."),
      followUrl: text((r) => r.follow, "URL template to follow the identity; `%s` stands for the follower's address."),
      connectionPage: text((r) => r.connpage || null, "URL of the identity's connection page; null when it has none."),
      instanceUrl: text((r) => r.instance_url || null, "URL of the identity's instance, when it differs from its hub; null otherwise."),
      flags: t.int({ nullable: true, description: 'Raw xchan flags bit field.', resolve: async (x, _args, ctx) => (await fullXchan(x, ctx))?.flags ?? null }),
      photoUpdatedAt: time((r) => r.photo_date, 'Time the profile photo last changed.'),
      nameUpdatedAt: time((r) => r.name_date, 'Time the name last changed.'),
      refreshedAt: time(
        (r) => r.updated,
        'Time the hub last refreshed this identity from its home hub (Hubzilla 10); null on Hubzilla 8, which does not record it.',
      ),
      hidden: bool((r) => r.hidden, 'Indicates the identity is hidden from directories.'),
      orphan: bool((r) => r.orphan, "Indicates the identity's hub is gone."),
      censored: bool((r) => r.censored, 'Indicates the hub admin censored the identity.'),
      selfCensored: bool((r) => r.selfcensored, 'Indicates the identity marked itself as adult or sensitive.'),
      system: bool((r) => r.system, "Indicates a hub's system channel."),
      publicForum: bool((r) => r.pubforum, 'Indicates a public forum.'),
      deleted: bool((r) => r.deleted, 'Indicates the identity was deleted.'),
    };
  },
});

builder.queryFields((t) => ({
  xchan: t.field({
    complexity: UPSTREAM_CALL,
    type: Xchan,
    nullable: true,
    description:
      "A global channel identity by exactly one of address, hash or guid, from the hub's own records (no network lookup); null when the hub does not know it.",
    args: {
      address: t.arg.string({ description: 'Address, `nick@host`.' }),
      hash: t.arg.string({ description: 'Portable hash.' }),
      guid: t.arg.string({ description: 'Globally unique id.' }),
    },
    resolve: async (_root, args, ctx) => {
      const given = (['address', 'hash', 'guid'] as const).filter((key) => typeof args[key] === 'string');
      const [key] = given;
      if (given.length !== 1 || key === undefined) throw new InputError('Give exactly one of address, hash or guid.', given.length ? [...given] : ['address']);
      const record = await ctx.hubzilla.loaders.xchan(key, args[key] as string);
      return record ? { record } : null;
    },
  }),
}));

// Federation: a supergraph names an xchan by its portable hash; one lookup per hash per request, as `node`.
builder.asEntity(Xchan, {
  key: builder.selection<{ hash: string }>('hash'),
  resolveReference: (ref, ctx) => ctx.hubzilla.loaders.xchan('hash', ref.hash).then((record) => (record ? { record } : null)),
});
