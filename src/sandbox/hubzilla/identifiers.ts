/**
 * Deterministic stand-ins for the identifiers a real hub generates at random:
 * the same seed string always yields the same UUID, hash, signature or key, so
 * every sandbox start serves byte-identical demo data.
 */
import { createHash } from 'node:crypto';

/** `len` deterministic bytes derived from `seed` (SHA-512 in counter mode). */
export function seededBytes(seed: string, len: number): Buffer {
  const parts: Buffer[] = [];
  let total = 0;
  for (let i = 0; total < len; i++) {
    const block = createHash('sha512').update(`${seed}#${i}`).digest();
    parts.push(block);
    total += block.length;
  }
  return Buffer.concat(parts).subarray(0, len);
}

/** base64url without padding, as Hubzilla's `base64url_encode()` emits. */
export function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

/** A version-4-shaped UUID; Hubzilla 8 uses UUIDs for item, file, photo and group hashes. */
export function uuidFor(seed: string): string {
  const b = seededBytes(`uuid:${seed}`, 16);
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** An 86-character base64url string: the shape of channel/xchan hashes and guids. */
export function portableId(seed: string): string {
  return base64url(seededBytes(`id:${seed}`, 64));
}

/** A `sha256.<base64url of a 4096-bit signature>` string (690 characters, like the real ones). */
export function signature(seed: string): string {
  return `sha256.${base64url(seededBytes(`sig:${seed}`, 512))}`;
}

/** A PEM block of the real key's size; the bytes are filler, not a usable key. */
export function pem(seed: string, label: 'PUBLIC KEY' | 'PRIVATE KEY'): string {
  const der = seededBytes(`pem:${label}:${seed}`, label === 'PUBLIC KEY' ? 550 : 2374);
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/** A 128-hex-digit digest, the length of Hubzilla's whirlpool password hashes. */
export function passwordHash(salt: string, password: string): string {
  return createHash('sha512')
    .update(salt + password)
    .digest('hex');
}

/** A 32-hex-digit salt. */
export function salt(seed: string): string {
  return seededBytes(`salt:${seed}`, 16).toString('hex');
}
