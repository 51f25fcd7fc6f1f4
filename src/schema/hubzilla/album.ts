/**
 * PhotoAlbum and Photo: Channel.albums with their photos. All photos of a
 * channel come from one `photos` call per request, grouped by album here,
 * so any number of albums costs two calls in all.
 */
import type { AlbumRecord, PhotoRecord } from '../../upstreams/hubzilla/records.js';
import { builder } from '../builder.js';
import { UPSTREAM_CALL } from '../cost.js';
import { Channel, channelLoaders } from './channel.js';
import { hubzillaFilePath, hubzillaPhotoPath } from './download-paths.js';
import { ChannelFile } from './file.js';

interface AlbumModel {
  record: AlbumRecord;
  channel: string | null;
}

interface PhotoModel {
  record: PhotoRecord;
  channel: string | null;
}

interface ScaleModel {
  scale: PhotoRecord['scales'][number];
  resourceId: string;
  channel: string | null;
}

export const PhotoScale = builder.objectRef<ScaleModel>('PhotoScale').implement({
  description: 'One stored size of a photo.',
  fields: (t) => ({
    scale: t.int({ description: 'Scale number: 0 is the original, higher numbers are smaller.', resolve: (s) => s.scale.imgscale }),
    width: t.int({ nullable: true, description: 'Width in pixels.', resolve: (s) => s.scale.width }),
    height: t.int({ nullable: true, description: 'Height in pixels.', resolve: (s) => s.scale.height }),
    size: t.field({ type: 'SafeInt', nullable: true, description: 'Size in bytes.', resolve: (s) => s.scale.filesize }),
    url: t.string({ description: 'URL of this size on the hub.', resolve: (s) => s.scale.src }),
    downloadUrl: t.string({
      description:
        'Gateway path that serves this size (send X-Hubzilla-Authorization), with Range support: the original streams in chunks like any file, smaller sizes come whole from `photo`.',
      resolve: (s) => hubzillaPhotoPath(s.resourceId, s.scale.imgscale, s.channel),
    }),
  }),
});

export const Photo = builder.objectRef<PhotoModel>('Photo').implement({
  description: 'A photo of a channel, with every stored size.',
  fields: (t) => ({
    resourceId: t.string({ description: 'Resource id of the photo, also the hash of its file.', resolve: (p) => p.record.resource_id }),
    title: t.string({ description: 'Title of the photo.', resolve: (p) => p.record.title }),
    description: t.string({ description: 'Description of the photo.', resolve: (p) => p.record.description }),
    album: t.string({ description: 'Name of the album holding the photo.', resolve: (p) => p.record.album }),
    filename: t.string({ description: 'File name of the photo.', resolve: (p) => p.record.filename }),
    mimetype: t.string({ description: 'Media type of the photo.', resolve: (p) => p.record.mimetype }),
    usage: t.int({
      nullable: true,
      description: 'Use of the photo (`photo_usage`): 0 normal, others for profile and cover photos.',
      resolve: (p) => p.record.photo_usage,
    }),
    createdAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the photo was uploaded.', resolve: (p) => p.record.created }),
    editedAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the photo last changed.', resolve: (p) => p.record.edited }),
    allowContacts: t.stringList({ description: 'Hashes of the xchans allowed to see the photo.', resolve: (p) => p.record.allow_cid }),
    allowGroups: t.stringList({ description: 'Hashes of the privacy groups allowed to see the photo.', resolve: (p) => p.record.allow_gid }),
    denyContacts: t.stringList({ description: 'Hashes of the xchans denied the photo.', resolve: (p) => p.record.deny_cid }),
    denyGroups: t.stringList({ description: 'Hashes of the privacy groups denied the photo.', resolve: (p) => p.record.deny_gid }),
    scales: t.field({
      type: [PhotoScale],
      description: 'Stored sizes, original first.',
      resolve: (p) => p.record.scales.map((scale) => ({ scale, resourceId: p.record.resource_id, channel: p.channel })),
    }),
    downloadUrl: t.string({ description: 'Gateway path that streams the original photo.', resolve: (p) => hubzillaFilePath(p.record.resource_id, p.channel) }),
    file: t.field({
      type: ChannelFile,
      nullable: true,
      description: "The photo's file in the channel's storage.",
      resolve: async (p, _args, ctx) => {
        const record = await channelLoaders(ctx, p.channel).file(p.record.resource_id);
        return record ? { record, channel: p.channel } : null;
      },
    }),
  }),
});

export const PhotoAlbum = builder.objectRef<AlbumModel>('PhotoAlbum').implement({
  description: 'A photo album of a channel: a folder of its storage holding photos.',
  fields: (t) => ({
    name: t.string({ description: "Name of the album (its folder's display path).", resolve: (a) => a.record.text }),
    shortName: t.string({ description: 'Name of the album shortened to 28 characters.', resolve: (a) => a.record.shorttext }),
    photoCount: t.int({ description: 'Number of photos in the album.', resolve: (a) => a.record.total }),
    url: t.string({ description: 'URL of the album on the hub.', resolve: (a) => a.record.url }),
    folderHash: t.string({ description: "Hash of the album's folder (the hub calls it `bin2hex`).", resolve: (a) => a.record.bin2hex }),
    folder: t.field({
      type: ChannelFile,
      nullable: true,
      description: "The album's folder in the channel's storage.",
      resolve: async (a, _args, ctx) => {
        const record = a.record.bin2hex ? await channelLoaders(ctx, a.channel).file(a.record.bin2hex) : null;
        return record ? { record, channel: a.channel } : null;
      },
    }),
    photos: t.field({
      complexity: UPSTREAM_CALL,
      type: [Photo],
      description: 'Photos of the album, one entry per photo with all its sizes.',
      resolve: async (a, _args, ctx) =>
        (await channelLoaders(ctx, a.channel).photos()).filter((p) => p.album === a.record.text).map((record) => ({ record, channel: a.channel })),
    }),
  }),
});

builder.objectFields(Channel, (t) => ({
  albums: t.field({
    complexity: UPSTREAM_CALL,
    type: [PhotoAlbum],
    description: 'Photo albums of the channel (`albums`); empty when there are none.',
    resolve: async (c, _args, ctx) => (await channelLoaders(ctx, c.nickname).albums()).map((record) => ({ record, channel: c.nickname })),
  }),
}));
