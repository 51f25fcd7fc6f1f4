/**
 * ChannelFile: a file or folder in a channel's cloud storage; Channel.files
 * (a connection over `files`' start/records), Channel.file(hash). Bytes never
 * travel inside JSON, except small reads through `content`: `downloadUrl`
 * points at the gateway route that streams the file.
 */
import { InputError } from '../../errors.js';
import { checkFileHash } from '../../upstreams/hubzilla/client.js';
import type { FileExportRecord, FileRecord } from '../../upstreams/hubzilla/records.js';
import { builder } from '../builder.js';
import { UPSTREAM_CALL } from '../cost.js';
import { resolveConnection } from '../pagination.js';
import { Channel, channelLoaders, parseScopedId, scopedId } from './channel.js';
import { hubzillaFilePath } from './download-paths.js';
import { Xchan, xchanByHash } from './xchan.js';

/** A file with the channel it belongs to. */
export interface FileModel {
  record: FileRecord;
  channel: string | null;
}

/** Largest read through ChannelFile.content; larger files go through downloadUrl. */
export const MAX_CONTENT_READ = 1024 * 1024;

export const ChannelFile = builder.objectRef<FileModel>('ChannelFile');

builder.node(ChannelFile, {
  description: "A file or folder in a Hubzilla channel's cloud storage.",
  id: { resolve: (f) => scopedId(f.channel, f.record.hash) },
  loadOne: async (id, ctx) => {
    const { channel, local } = parseScopedId(id);
    const record = await channelLoaders(ctx, channel).file(checkFileHash(local, 'id'));
    return record ? { record, channel } : null;
  },
  fields: (t) => {
    const list = (key: 'allow_cid' | 'allow_gid' | 'deny_cid' | 'deny_gid', description: string) =>
      t.stringList({ description, resolve: (f) => f.record[key] });
    return {
      restId: t.field({ type: 'SafeInt', nullable: true, description: 'Numeric id of the file on the hub.', resolve: (f) => f.record.id }),
      hash: t.string({ description: 'Hash of the file (a UUID), its stable id.', resolve: (f) => f.record.hash }),
      filename: t.string({ description: 'Name of the file or folder.', resolve: (f) => f.record.filename }),
      contentType: t.string({ description: 'Media type of the file; `multipart/mixed` for a folder.', resolve: (f) => f.record.filetype }),
      size: t.field({ type: 'SafeInt', description: 'Size of the file in bytes (0 for a folder).', resolve: (f) => f.record.filesize }),
      revision: t.int({ nullable: true, description: 'Revision of the file.', resolve: (f) => f.record.revision }),
      displayPath: t.string({ description: "Path of the file in the channel's storage, e.g. `Documents/notes.txt`.", resolve: (f) => f.record.display_path }),
      folderHash: t.string({ nullable: true, description: 'Hash of the folder holding the file; null at the root.', resolve: (f) => f.record.folder || null }),
      folder: t.field({
        type: ChannelFile,
        nullable: true,
        description: 'The folder holding the file; null at the root.',
        resolve: async (f, _args, ctx) => {
          if (!f.record.folder) return null;
          const record = await channelLoaders(ctx, f.channel).file(f.record.folder);
          return record ? { record, channel: f.channel } : null;
        },
      }),
      isDirectory: t.boolean({ description: 'Indicates a folder.', resolve: (f) => f.record.is_dir }),
      isPhoto: t.boolean({ description: 'Indicates a photo, also listed in an album.', resolve: (f) => f.record.is_photo }),
      storedOnDisk: t.boolean({
        description: 'Indicates the hub stores the bytes in its file system rather than its database.',
        resolve: (f) => f.record.os_storage,
      }),
      flags: t.int({ nullable: true, description: 'Raw attach flags.', resolve: (f) => f.record.flags }),
      createdAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the file was uploaded.', resolve: (f) => f.record.created }),
      editedAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the file last changed.', resolve: (f) => f.record.edited }),
      allowContacts: list('allow_cid', 'Hashes of the xchans allowed to see the file; empty means unrestricted.'),
      allowGroups: list('allow_gid', 'Hashes of the privacy groups allowed to see the file.'),
      denyContacts: list('deny_cid', 'Hashes of the xchans denied the file.'),
      denyGroups: list('deny_gid', 'Hashes of the privacy groups denied the file.'),
      creator: t.field({
        type: Xchan,
        nullable: true,
        description:
          "Who uploaded the file. The file list leaves it out: the first read of a file's creator costs one filemeta call (and one verify, to learn the login's channel), and the gateway remembers it for that channel after that, whichever login of it asks (a file's creator never changes).",
        resolve: async (f, _args, ctx) => xchanByHash(await channelLoaders(ctx, f.channel).creator(f.record)),
      }),
      downloadUrl: t.string({
        nullable: true,
        description: 'Gateway path that streams the file (send X-Hubzilla-Authorization); null for a folder.',
        resolve: (f) => (f.record.is_dir ? null : hubzillaFilePath(f.record.hash, f.channel)),
      }),
      export: t.field({
        complexity: UPSTREAM_CALL,
        type: ChannelFileExport,
        nullable: true,
        description:
          'The file as the hub exports it for another hub (`file/export`): its record and every folder above it; null when the hub no longer has it.',
        resolve: async (f, _args, ctx) => {
          const exported = await channelLoaders(ctx, f.channel).fileExport(f.record.hash);
          return exported ? { record: exported, channel: f.channel } : null;
        },
      }),
      content: t.string({
        complexity: UPSTREAM_CALL,
        nullable: true,
        description: `A chunk of the file, base64-encoded (\`filedata\`), for small reads of at most ${MAX_CONTENT_READ} bytes; null for a folder. Use downloadUrl for whole files.`,
        args: {
          start: t.arg.int({ defaultValue: 0, description: 'First byte, counting from 0.' }),
          length: t.arg.int({ required: true, description: `Number of bytes, 1 to ${MAX_CONTENT_READ}.` }),
        },
        resolve: async (f, args, ctx) => {
          const start = args.start ?? 0;
          if (start < 0) throw new InputError('start must not be negative.', ['start']);
          if (args.length < 1 || args.length > MAX_CONTENT_READ) throw new InputError(`length must be between 1 and ${MAX_CONTENT_READ}.`, ['length']);
          if (f.record.is_dir) return null;
          if (start >= f.record.filesize) return '';
          const chunk = await channelLoaders(ctx, f.channel).client.getFileData(f.record.hash, start, Math.min(args.length, f.record.filesize - start));
          return chunk?.content ?? null;
        },
      }),
    };
  },
});

const ChannelFileExport = builder.objectRef<{ record: FileExportRecord; channel: string | null }>('ChannelFileExport').implement({
  description: 'A file as `file/export` describes it for a hub that imports it.',
  fields: (t) => ({
    fetchUrl: t.string({ description: "URL where the importing hub fetches the bytes (the hub's `getfile`).", resolve: (e) => e.record.fetch_url }),
    originalChannel: t.string({ description: 'Nickname of the channel the file comes from.', resolve: (e) => e.record.original_channel }),
    folders: t.field({
      type: [ChannelFile],
      description: 'The folders above the file, from the root down; empty at the root.',
      resolve: (e) => e.record.attach.slice(0, -1).map((record) => ({ record, channel: e.channel })),
    }),
    file: t.field({
      type: ChannelFile,
      description: 'The file itself, with its creator.',
      resolve: (e) => ({ record: e.record.attach[e.record.attach.length - 1] as FileRecord, channel: e.channel }),
    }),
  }),
});

export const ChannelFileConnection = builder.connectionObject(
  { type: ChannelFile, name: 'ChannelFileConnection', description: 'A page of channel files.' },
  { name: 'ChannelFileEdge', description: 'A channel file with its cursor.' },
);

builder.objectFields(Channel, (t) => ({
  files: t.connection(
    {
      type: ChannelFile,
      description: 'Files and folders of the channel (`files`), oldest first. The hub reports no total, so totalCount is null.',
      args: {
        hash: t.arg.string({ description: 'Only the file or folder of this exact hash (`filehash`).' }),
        filename: t.arg.string({ description: 'Only files whose name contains this text (the hub treats `%` and `_` as wildcards).' }),
        filetype: t.arg.string({ description: 'Only files whose media type contains this text, e.g. `image`.' }),
      },
      resolve: (c, args, ctx) => {
        const loaders = channelLoaders(ctx, c.nickname);
        const filters = {
          filehash: args.hash === null || args.hash === undefined ? undefined : checkFileHash(args.hash),
          filename: args.filename ?? undefined,
          filetype: args.filetype ?? undefined,
        };
        return resolveConnection(args, ctx.defaultPageSize, async (page, perPage) => {
          const result = await loaders.client.listFiles(filters, { offset: (page - 1) * perPage, limit: perPage });
          return { ...result, items: result.items.map((record) => ({ record, channel: c.nickname })) };
        });
      },
    },
    ChannelFileConnection,
  ),
  file: t.field({
    complexity: UPSTREAM_CALL,
    type: ChannelFile,
    nullable: true,
    description: 'One file or folder by its exact hash (`filemeta`); null when there is none.',
    args: { hash: t.arg.string({ required: true, description: 'Hash of the file.' }) },
    resolve: async (c, args, ctx) => {
      const record = await channelLoaders(ctx, c.nickname).file(checkFileHash(args.hash));
      return record ? { record, channel: c.nickname } : null;
    },
  }),
}));
