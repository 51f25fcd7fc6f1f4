import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { gitlabCredentials, nearMissCredentials } from '../../src/server/credentials.js';
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

  it('refuses Authorization schemes other than Bearer, and a bare token, saying what to send', () => {
    for (const value of ['Basic eDp5', 'demo-token', 'Token demo-token']) {
      expect(() => gitlabCredentials(new Headers({ Authorization: value }), url())).toThrow(/^Authorization must be "Bearer <token>"/);
    }
    expect(gitlabCredentials(new Headers({ Authorization: 'bearer abc' }), url())).toEqual({ authorization: 'bearer abc' });
  });

  it('names near-miss credential headers, and not the ones it reads', () => {
    expect(
      nearMissCredentials(['Private_Token', 'x-private-token', 'PRIVATE-TOKEN', 'jobtoken', 'x-gitlab-token', 'accept', 'X_Hubzilla_Authorization']),
    ).toEqual(['private_token', 'x-private-token', 'jobtoken', 'x_hubzilla_authorization']);
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
