/** Both of Hubzilla's vocabularies read with one meaning, and an upload's image link read apart from the text wherever the hub put it. */
import { describe, expect, it } from 'vitest';
import { activityType, bodyImages, bodyText, objectKind } from '../../src/upstreams/hubzilla/vocabulary.js';

const AS1 = 'http://activitystrea.ms/schema/1.0/';
const LINK = '[zrl=https://hub.test/photos/demo/image/ab12][zmg=https://hub.test/photo/ab12-2.png]pic.png[/zmg][/zrl]';

describe('activityType and objectKind', () => {
  it.each([
    [`${AS1}post`, 'POST'],
    ['Create', 'POST'],
    [`${AS1}like`, 'LIKE'],
    ['Like', 'LIKE'],
    ['http://purl.org/zot/activity/attendmaybe', 'ATTEND_MAYBE'],
    ['TentativeAccept', 'ATTEND_MAYBE'],
    ['Announce', 'SHARE'],
    ['Add', 'OTHER'],
    ['', 'OTHER'],
  ])('reads the verb %j as %s', (verb, type) => {
    expect(activityType(verb)).toBe(type);
  });

  it.each([
    [`${AS1}note`, 'NOTE'],
    [`${AS1}comment`, 'NOTE'],
    ['Note', 'NOTE'],
    ['Image', 'PHOTO'],
    ['Question', 'QUESTION'],
    ['https://example.org/ns#Thing', 'OTHER'],
  ])('reads the object type %j as %s', (type, kind) => {
    expect(objectKind(type)).toBe(kind);
  });
});

describe('bodyText and bodyImages', () => {
  it.each([
    ['after the text (8.8)', `with a picture\n\n\n\n${LINK}`],
    ['before the text (10.x)', `${LINK}\n\nwith a picture`],
  ])('reads an upload whose link is %s the same', (_where, body) => {
    expect(bodyText(body)).toBe('with a picture');
    expect(bodyImages(body)).toEqual([{ url: 'https://hub.test/photo/ab12-2.png', link: 'https://hub.test/photos/demo/image/ab12', name: 'pic.png' }]);
  });

  it('keeps an image inside the text, and reads [img] and a link-less image', () => {
    const body = 'look [img]https://x.test/a.png[/img] here\n\n[zmg=https://x.test/b.png]b[/zmg]';
    expect(bodyText(body)).toBe('look [img]https://x.test/a.png[/img] here');
    expect(bodyImages(body)).toEqual([
      { url: 'https://x.test/a.png', link: null, name: '' },
      { url: 'https://x.test/b.png', link: null, name: 'b' },
    ]);
  });

  it('leaves a body without images as it is, but trimmed', () => {
    expect(bodyText('  plain [b]text[/b] \n')).toBe('plain [b]text[/b]');
    expect(bodyImages('plain')).toEqual([]);
  });
});
