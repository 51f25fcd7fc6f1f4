/**
 * The job log parser on GitLab's own log format (sections as in GitLab's
 * "Custom collapsible sections" documentation): chunks cut anywhere, a
 * character split across reads, sections across chunks, nested sections.
 */
import { describe, expect, it } from 'vitest';
import { LogParser, plainText } from '../../src/subscriptions/log-parser.js';

const ESC = '\u001b';
const LOG = [
  `section_start:1560896352:my_first_section[collapsed=true]\r${ESC}[0K${ESC}[36;1mHeader of the 1st collapsible section${ESC}[0;m`,
  'this line should be hidden when collapsed',
  `section_start:1560896353:inner\r${ESC}[0Kinner work: ünïcode ✓`,
  `section_end:1560896355:inner\r${ESC}[0K`,
  `section_end:1560896360:my_first_section\r${ESC}[0K`,
  `${ESC}[32;1mJob succeeded${ESC}[0;m`,
  '',
].join('\n');

describe('LogParser', () => {
  it('keeps every byte in raw and offsets, whatever the cuts, even inside a character', () => {
    const bytes = Buffer.from(LOG);
    for (const size of [1, 2, 3, 7, 64, bytes.length]) {
      const parser = new LogParser();
      let raw = '';
      let expected = 0;
      for (let at = 0; at < bytes.length; at += size) {
        const chunk = parser.feed(bytes.subarray(at, at + size));
        if (!chunk) continue;
        expect(chunk.offset).toBe(expected);
        expected += Buffer.byteLength(chunk.raw);
        raw += chunk.raw;
      }
      expect(raw, `cut every ${size} bytes`).toBe(LOG);
      expect(parser.offset).toBe(bytes.length);
    }
  });

  it('counts a character split across reads in `consumed`, so the next read starts after it, not inside it', () => {
    const parser = new LogParser();
    const bytes = Buffer.from('ok ✓\n');
    const cut = bytes.indexOf(0xe2) + 1;
    expect(parser.feed(bytes.subarray(0, cut))?.raw).toBe('ok ');
    expect([parser.offset, parser.consumed]).toEqual([3, 4]);
    expect(parser.feed(bytes.subarray(parser.consumed))).toMatchObject({ offset: 3, raw: '✓\n' });
  });

  it('reads sections with their times, durations and lines, nested and across chunks', () => {
    const parser = new LogParser();
    const bytes = Buffer.from(LOG);
    const parts = [parser.feed(bytes.subarray(0, 100)), parser.feed(bytes.subarray(100))].flatMap((c) => c?.sections ?? []);
    const outer = parts.filter((p) => p.name === 'my_first_section');
    expect(outer[0]?.startedAt).toBe('2019-06-18T22:19:12.000Z');
    expect(outer.at(-1)).toMatchObject({ endedAt: '2019-06-18T22:19:20.000Z', duration: 8 });
    expect(outer.flatMap((p) => p.lines)).toEqual(['Header of the 1st collapsible section', 'this line should be hidden when collapsed']);
    const inner = parts.find((p) => p.name === 'inner');
    expect(inner).toMatchObject({ duration: 2, lines: ['inner work: ünïcode ✓'] });
  });

  it('gives the text without colours or markers', () => {
    expect(plainText(LOG)).toBe('Header of the 1st collapsible section\nthis line should be hidden when collapsed\ninner work: ünïcode ✓\n\n\nJob succeeded\n');
  });
});
