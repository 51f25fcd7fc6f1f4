import { describe, expect, it } from 'vitest';
import { paginate } from '../../src/sandbox/gitlab/pagination.js';

const base = { url: 'http://sandbox.test/api/v4/projects', query: { search: ['a b'], page: ['3'] } };

describe('sandbox pagination', () => {
  it('counts a list of exactly 10,000 items', () => {
    const page = paginate(
      Array.from({ length: 10_000 }, (_, i) => i),
      { page: 1, perPage: 100 },
      base,
    );
    expect(page.headers['X-Total']).toBe('10000');
    expect(page.headers['X-Total-Pages']).toBe('100');
    expect(page.headers.Link).toContain('rel="last"');
  });

  it('stops counting at 10,001 items', () => {
    const page = paginate(
      Array.from({ length: 10_001 }, (_, i) => i),
      { page: 100, perPage: 100 },
      base,
    );
    expect(page.headers).not.toHaveProperty('X-Total');
    expect(page.headers).not.toHaveProperty('X-Total-Pages');
    expect(page.headers['X-Next-Page']).toBe('101');
    expect(page.headers.Link).not.toContain('rel="last"');
  });

  it('replaces page, adds per_page and form-encodes the other parameters, sorted', () => {
    const page = paginate([1, 2, 3], { page: 1, perPage: 2 }, base);
    expect(page.items).toEqual([1, 2]);
    expect(page.headers.Link).toBe(
      '<http://sandbox.test/api/v4/projects?page=2&per_page=2&search=a+b>; rel="next", ' +
        '<http://sandbox.test/api/v4/projects?page=1&per_page=2&search=a+b>; rel="first", ' +
        '<http://sandbox.test/api/v4/projects?page=2&per_page=2&search=a+b>; rel="last"',
    );
  });
});
