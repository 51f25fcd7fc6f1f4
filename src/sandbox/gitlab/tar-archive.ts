/**
 * Uncompressed POSIX ustar archives for GET /projects/:id/snapshot, which
 * GitLab answers with a tar of the bare git repository (send_git_snapshot).
 * The sandbox's repositories are tiny, so each archive is built from its
 * files and streamed block by block.
 */
import { Readable } from 'node:stream';

export interface TarFile {
  path: string;
  content: Buffer;
  mtime: number;
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function header(file: TarFile): Buffer {
  const block = Buffer.alloc(512);
  block.write(file.path.slice(0, 100), 0, 'utf8');
  block.write(octal(0o644, 8), 100);
  block.write(octal(0, 8), 108);
  block.write(octal(0, 8), 116);
  block.write(octal(file.content.length, 12), 124);
  block.write(octal(Math.floor(file.mtime / 1000), 12), 136);
  block.fill(' ', 148, 156);
  block.write('0', 156);
  block.write('ustar\0', 257);
  block.write('00', 263);
  block.write('git', 265);
  block.write('git', 297);
  let checksum = 0;
  for (const byte of block) checksum += byte;
  block.write(`${checksum.toString(8).padStart(6, '0')}\0 `, 148);
  return block;
}

/** Size of the archive: a header and padded data per file, then two zero blocks. */
export function tarSize(files: readonly TarFile[]): number {
  return files.reduce((size, file) => size + 512 + Math.ceil(file.content.length / 512) * 512, 0) + 1024;
}

/** The archive as a stream of 512-byte-aligned pieces. */
export function tarStream(files: readonly TarFile[]): Readable {
  function* blocks(): Generator<Buffer> {
    for (const file of files) {
      yield header(file);
      yield file.content;
      const padding = (512 - (file.content.length % 512)) % 512;
      if (padding > 0) yield Buffer.alloc(padding);
    }
    yield Buffer.alloc(1024);
  }
  return Readable.from(blocks(), { objectMode: false });
}
