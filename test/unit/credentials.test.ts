import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { gitlabCredentials } from '../../src/server/credentials.js';
import { decodeGlobalId, encodeGlobalId } from '../../src/schema/global-id.js';

const url = (query = '') => new URL(`http://localhost/graphql${query}`);

describe('gitlabCredentials', () => {
  it('forwards the credential headers as received', () => {
    const headers = new Headers({ 'Private-Token': 'p', Sudo: 'alice', 'JOB-TOKEN': 'j', Authorization: 'Bearer o' });
    expect(gitlabCredentials(headers, url())).toEqual({ 'private-token': 'p', sudo: 'alice', 'job-token': 'j', authorization: 'Bearer o' });
  });

  it('turns query-parameter credentials into headers', () => {
    expect(gitlabCredentials(new Headers(), url('?private_token=p&access_token=o&sudo=2&job_token=j'))).toEqual({
      'private-token': 'p',
      authorization: 'Bearer o',
      sudo: '2',
      'job-token': 'j',
    });
  });

  it('leaves out Authorization schemes other than Bearer', () => {
    expect(gitlabCredentials(new Headers({ Authorization: 'Basic eDp5' }), url())).toEqual({});
  });

  it('rejects oversized credentials', () => {
    expect(() => gitlabCredentials(new Headers({ 'Private-Token': 'x'.repeat(5000) }), url())).toThrow(InputError);
  });
});

describe('global ids', () => {
  it('round-trips project and job ids', () => {
    expect(encodeGlobalId('Project', 42)).toBe('gid://duograph/Project/42');
    expect(decodeGlobalId('gid://duograph/Job/42/1001')).toEqual({ typename: 'Job', id: '42/1001' });
  });

  it('rejects anything else', () => {
    for (const bad of ['42', 'gid://gitlab/Project/1', 'gid://duograph/Project/', 'UHJvamVjdDox']) {
      expect(() => decodeGlobalId(bad)).toThrow(InputError);
    }
  });
});
