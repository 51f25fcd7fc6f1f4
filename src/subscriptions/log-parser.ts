/**
 * Reads a GitLab job log as it streams: bytes in, chunks out. Each chunk
 * keeps the raw text (ANSI colours and section markers included), the text
 * without them, and the parts of the collapsible sections it touches
 * (`section_start:<unix time>:<name>[options]\r\e[0K` ...
 * `section_end:<unix time>:<name>\r\e[0K`). Multi-byte characters split
 * across reads wait for their last byte; a line split across chunks counts
 * in the chunk that ends it. State is a few open section names and one
 * partial line, whatever the log's size.
 */

/** One section's share of a chunk: when it started, when it ended (if in this chunk or before), its complete lines here. */
export interface SectionPart {
  name: string;
  startedAt: string;
  endedAt: string | null;
  /** Seconds from start to end; null while the section is open. */
  duration: number | null;
  lines: string[];
}

export interface ParsedChunk {
  /** Byte offset of the chunk's first byte in the whole log. */
  offset: number;
  raw: string;
  text: string;
  sections: SectionPart[];
}

const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;
const MARKER = /section_(start|end):(\d+):([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\r?(?:\u001b\[0K)?/g;

/** Text as a reader sees it: no colours, no section markers. */
export function plainText(raw: string): string {
  return raw.replace(MARKER, '').replace(ANSI, '');
}

/** Bytes at the end of `buffer` that start a UTF-8 character not complete yet (0 to 3). */
function incompleteTail(buffer: Buffer): number {
  for (let back = 1; back <= Math.min(3, buffer.length); back++) {
    const byte = buffer[buffer.length - back] ?? 0;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

export class LogParser {
  /** Bytes of the log turned into chunks so far. */
  offset = 0;
  private held: Buffer = Buffer.alloc(0);

  /** Bytes fed so far: the chunks' and those of a character still waiting for its last byte. The next read starts here. */
  get consumed(): number {
    return this.offset + this.held.length;
  }
  private partial = '';
  private readonly open: { name: string; startedAt: string }[] = [];

  /** The chunk for `bytes` (what follows everything fed before), or null when they only end in a character still incomplete. */
  feed(bytes: Buffer): ParsedChunk | null {
    const all = this.held.length ? Buffer.concat([this.held, bytes]) : bytes;
    const keep = incompleteTail(all);
    const usable = all.subarray(0, all.length - keep);
    this.held = Buffer.from(all.subarray(all.length - keep));
    if (usable.length === 0) return null;
    const raw = usable.toString('utf8');
    const chunk: ParsedChunk = { offset: this.offset, raw, text: plainText(raw), sections: this.sections(raw) };
    this.offset += usable.length;
    return chunk;
  }

  private sections(raw: string): SectionPart[] {
    const parts = new Map<string, SectionPart>();
    const partOf = (entry: { name: string; startedAt: string }): SectionPart => {
      const key = `${entry.name}\u0000${entry.startedAt}`;
      let part = parts.get(key);
      if (!part) parts.set(key, (part = { name: entry.name, startedAt: entry.startedAt, endedAt: null, duration: null, lines: [] }));
      return part;
    };
    const text = this.partial + raw;
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      let rest = line;
      for (const match of line.matchAll(MARKER)) {
        const at = new Date(Number(match[2]) * 1000).toISOString();
        const name = match[3] ?? '';
        if (match[1] === 'start') {
          this.open.push({ name, startedAt: at });
          partOf({ name, startedAt: at });
        } else {
          const index = this.open.map((o) => o.name).lastIndexOf(name);
          if (index < 0) continue;
          const [entry] = this.open.splice(index, 1);
          if (!entry) continue;
          const part = partOf(entry);
          part.endedAt = at;
          part.duration = (Date.parse(at) - Date.parse(entry.startedAt)) / 1000;
        }
        rest = rest.replace(match[0], '');
      }
      const shown = rest.replace(ANSI, '').replace(/\r$/, '');
      const innermost = this.open[this.open.length - 1];
      if (innermost && shown !== '') partOf(innermost).lines.push(shown);
    }
    return [...parts.values()];
  }
}
