/**
 * Zip archives for job artifacts, written by hand with node:zlib (deflate
 * and crc32): small archives are built in memory from their entries; the
 * large generated archive (option largeArtifactBytes) is one stored entry
 * whose bytes are produced chunk by chunk on every download, so a gigabyte
 * download never sits in memory. Its CRC-32 is computed once, lazily, by
 * streaming the same generator.
 *
 * Layout (APPNOTE.TXT): local header + data per entry, central directory,
 * end of central directory. No data descriptors and no ZIP64, so entries
 * and the whole archive stay below 4 GiB.
 */
import { Readable } from 'node:stream';
import { crc32, deflateRawSync, gzipSync } from 'node:zlib';
import type { ArtifactEntry } from './store.js';

const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
/** General purpose flag bit 11: names are UTF-8. */
const UTF8_NAMES = 0x0800;
/** Made by "UNIX" (3), spec version 3.0, so unzip applies the mode bits in the external attributes. */
const MADE_BY_UNIX = 0x031e;
const FILE_MODE = (0o100644 << 16) >>> 0;
/** The largest generated archive without ZIP64 (sizes and offsets are 32-bit). */
export const MAX_GENERATED_BYTES = 0xffffffff - 65_536;

interface EntryHeader {
  name: Buffer;
  method: 0 | 8;
  crc: number;
  compressedSize: number;
  size: number;
  time: number;
  date: number;
}

/** MS-DOS time and date fields of a timestamp (local fields read as UTC, as most tools write them). */
function dosDateTime(ms: number): { time: number; date: number } {
  const d = new Date(ms);
  const year = Math.max(d.getUTCFullYear(), 1980);
  return {
    time: (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | Math.floor(d.getUTCSeconds() / 2),
    date: ((year - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate(),
  };
}

function localHeader(entry: EntryHeader): Buffer {
  const header = Buffer.alloc(30);
  header.writeUInt32LE(LOCAL_HEADER, 0);
  header.writeUInt16LE(entry.method === 8 ? 20 : 10, 4);
  header.writeUInt16LE(UTF8_NAMES, 6);
  header.writeUInt16LE(entry.method, 8);
  header.writeUInt16LE(entry.time, 10);
  header.writeUInt16LE(entry.date, 12);
  header.writeUInt32LE(entry.crc, 14);
  header.writeUInt32LE(entry.compressedSize, 18);
  header.writeUInt32LE(entry.size, 22);
  header.writeUInt16LE(entry.name.length, 26);
  header.writeUInt16LE(0, 28);
  return Buffer.concat([header, entry.name]);
}

function centralHeader(entry: EntryHeader, offset: number): Buffer {
  const header = Buffer.alloc(46);
  header.writeUInt32LE(CENTRAL_HEADER, 0);
  header.writeUInt16LE(MADE_BY_UNIX, 4);
  header.writeUInt16LE(entry.method === 8 ? 20 : 10, 6);
  header.writeUInt16LE(UTF8_NAMES, 8);
  header.writeUInt16LE(entry.method, 10);
  header.writeUInt16LE(entry.time, 12);
  header.writeUInt16LE(entry.date, 14);
  header.writeUInt32LE(entry.crc, 16);
  header.writeUInt32LE(entry.compressedSize, 20);
  header.writeUInt32LE(entry.size, 24);
  header.writeUInt16LE(entry.name.length, 28);
  // Extra field, comment, disk number and internal attributes stay 0.
  header.writeUInt32LE(FILE_MODE, 38);
  header.writeUInt32LE(offset, 42);
  return Buffer.concat([header, entry.name]);
}

function endOfCentralDirectory(count: number, size: number, offset: number): Buffer {
  const end = Buffer.alloc(22);
  end.writeUInt32LE(END_OF_CENTRAL_DIRECTORY, 0);
  end.writeUInt16LE(count, 8);
  end.writeUInt16LE(count, 10);
  end.writeUInt32LE(size, 12);
  end.writeUInt32LE(offset, 16);
  return end;
}

/** A complete zip of small entries, each deflated unless storing is smaller. */
export function buildZip(entries: readonly ArtifactEntry[], modifiedAt: number): Buffer {
  const { time, date } = dosDateTime(modifiedAt);
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const deflated = deflateRawSync(entry.content);
    const stored = deflated.length >= entry.content.length;
    const data = stored ? entry.content : deflated;
    const header: EntryHeader = {
      name: Buffer.from(entry.path, 'utf8'),
      method: stored ? 0 : 8,
      crc: crc32(entry.content),
      compressedSize: data.length,
      size: entry.content.length,
      time,
      date,
    };
    const local = localHeader(header);
    central.push(centralHeader(header, offset));
    parts.push(local, data);
    offset += local.length + data.length;
  }
  const directory = Buffer.concat(central);
  return Buffer.concat([...parts, directory, endOfCentralDirectory(entries.length, directory.length, offset)]);
}

/** GitLab's metadata.gz (the archive's file listing for the artifact browser); only its size is shown. */
export function buildMetadata(entries: readonly ArtifactEntry[]): Buffer {
  return gzipSync(Buffer.from(JSON.stringify(entries.map((e) => ({ path: e.path, size: e.content.length })))));
}

const CHUNK_SIZE = 65_536;
/** The repeating 64 KiB block the generated file is made of: readable text, so a peek at it makes sense. */
const GENERATED_CHUNK = ((): Buffer => {
  const line = Buffer.from('duograph sandbox generated artifact data 0123456789abcdefghijklmnopqrstuvwxyz\n');
  const chunk = Buffer.alloc(CHUNK_SIZE);
  for (let i = 0; i < CHUNK_SIZE; i += line.length) line.copy(chunk, i);
  return chunk;
})();

/** The generated file's bytes, chunk by chunk; the block is shared and never written to. */
function* generatedBytes(size: number): Generator<Buffer> {
  for (let sent = 0; sent < size; sent += CHUNK_SIZE) {
    yield size - sent >= CHUNK_SIZE ? GENERATED_CHUNK : GENERATED_CHUNK.subarray(0, size - sent);
  }
}

/** The generated file as a stream (a single-file download from the large archive). */
export function generatedFileStream(size: number): Readable {
  return Readable.from(generatedBytes(size), { objectMode: false });
}

const crcCache = new Map<number, Promise<number>>();

/** CRC-32 of the generated file of `size` bytes, computed once per size without holding the file. */
function generatedCrc(size: number): Promise<number> {
  let cached = crcCache.get(size);
  if (!cached) {
    cached = (async () => {
      let crc = 0;
      let sinceYield = 0;
      for (const chunk of generatedBytes(size)) {
        crc = crc32(chunk, crc);
        sinceYield += chunk.length;
        // Yield to the event loop every 32 MiB so other requests keep being served.
        if (sinceYield >= 32 * 1_048_576) {
          sinceYield = 0;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
      return crc;
    })();
    crcCache.set(size, cached);
  }
  return cached;
}

/** Size in bytes of the archive holding one stored generated file. */
export function generatedZipSize(path: string, size: number): number {
  const nameLength = Buffer.byteLength(path);
  return 30 + nameLength + size + 46 + nameLength + 22;
}

/** The archive holding one stored generated file, streamed: headers, generated chunks, central directory. */
export function generatedZipStream(path: string, size: number, modifiedAt: number): Readable {
  const { time, date } = dosDateTime(modifiedAt);
  async function* archive(): AsyncGenerator<Buffer> {
    const header: EntryHeader = { name: Buffer.from(path, 'utf8'), method: 0, crc: await generatedCrc(size), compressedSize: size, size, time, date };
    const local = localHeader(header);
    yield local;
    yield* generatedBytes(size);
    const directory = centralHeader(header, 0);
    yield Buffer.concat([directory, endOfCentralDirectory(1, directory.length, local.length + size)]);
  }
  return Readable.from(archive(), { objectMode: false });
}
