/**
 * What the answer cache may keep and for how long (upstreams/cache-policy.ts),
 * and how a caller's Cache-Control reads (request-scope.ts): pure functions,
 * checked on GitLab's own shapes.
 */
import { describe, expect, it } from 'vitest';
import { requestedMaxAgeMs } from '../../src/request-scope.js';
import { gitlabPolicy, hubzillaPolicy, invalidationTags, projectAliases, webhookTags, withoutProjectSecrets } from '../../src/upstreams/cache-policy.js';

describe('cache families', () => {
  it.each([
    [['projects'], 'project_lists', undefined],
    [['users', 'demo', 'projects'], 'project_lists', undefined],
    [['projects', 7], 'projects', undefined],
    [['projects', 'demo/playground', 'forks'], 'project_lists', undefined],
    [['projects', 7, 'jobs'], 'jobs', { projectId: 7, kind: 'jobs' }],
    [['projects', 7, 'jobs', 2003], 'jobs', { projectId: 7, kind: 'jobs' }],
    [['projects', 7, 'pipelines', 202, 'jobs'], 'jobs', { projectId: 7, kind: 'jobs' }],
    [['projects', 7, 'pipelines', 202, 'bridges'], 'jobs', { projectId: 7, kind: 'jobs' }],
    [['projects', 7, 'pipelines', 202, 'trigger_jobs'], 'jobs', { projectId: 7, kind: 'jobs' }],
    [['projects', 7, 'pipelines'], 'pipelines', { projectId: 7, kind: 'pipelines' }],
    [['projects', 7, 'pipelines', 202, 'test_report_summary'], 'pipelines', { projectId: 7, kind: 'pipelines' }],
    [['projects', 7, 'hooks'], 'hooks', undefined],
    [['projects', 7, 'push_rule'], 'push_rules', undefined],
    [['projects', 7, 'repository', 'commits', 'abc'], 'commits', undefined],
  ] as const)('GET /%s is %s', (path, family, webhook) => {
    const policy = gitlabPolicy(path);
    expect(policy?.family).toBe(family);
    expect(policy?.webhook).toEqual(webhook);
  });

  it('never stores a credential check, a job log or an artifact, nor Hubzilla answers that hold secrets', () => {
    expect(gitlabPolicy(['user'])).toBeNull();
    expect(gitlabPolicy(['version'])).toBeNull();
    expect(gitlabPolicy(['projects', 7, 'jobs', 2003, 'trace'])).toBeNull();
    expect(gitlabPolicy(['projects', 7, 'jobs', 2003, 'artifacts'])).toBeNull();
    expect(hubzillaPolicy(['verify'])).toBeNull();
    expect(hubzillaPolicy(['channel', 'export', 'basic'])).toBeNull();
    expect(hubzillaPolicy(['abconfig'])).toBeNull();
    expect(hubzillaPolicy(['channel', 'stream'])?.family).toBe('streams');
  });

  it('drops by the project as the write named it and as its answer names it', () => {
    expect(invalidationTags('gitlab', ['projects', 'Demo/Playground', 'pipeline'], { id: 9, project_id: 7 })).toEqual([
      'gitlab:project-lists',
      'gitlab:project:demo/playground',
      'gitlab:project:7',
    ]);
    expect(invalidationTags('gitlab', ['projects', 7, 'star'], { id: 7, path_with_namespace: 'demo/playground' })).toContain('gitlab:project:demo/playground');
    expect(invalidationTags('hubzilla', ['item', 'update'], null)).toEqual(['hubzilla:all']);
    // A webhook drops a project's jobs and pipelines: what job lists and pipeline reads are tagged with.
    const jobs = gitlabPolicy(['projects', 7, 'jobs']);
    expect(webhookTags(7).some((tag) => jobs?.tags.includes(tag))).toBe(true);
    expect(webhookTags(7).some((tag) => gitlabPolicy(['projects', 7])?.tags.includes(tag))).toBe(false);
    expect(projectAliases('{"id":7,"name":"Playground","path_with_namespace":"demo/playground"}')).toEqual([
      'gitlab:project:7',
      'gitlab:project:demo/playground',
    ]);
  });
});

describe('what is stored of a project', () => {
  it('loses the runners token and the user and password of its import URL, in a record and in a list', () => {
    const project = { id: 7, runners_token: 'GR1348941secret', import_url: 'https://importer:s3cr3t-pass@github.com/demo/playground.git', name: 'ü' };
    const one = JSON.parse(withoutProjectSecrets(JSON.stringify(project))) as Record<string, unknown>;
    expect(one).toEqual({ id: 7, import_url: 'https://github.com/demo/playground.git', name: 'ü' });
    const list = withoutProjectSecrets(JSON.stringify([project, { id: 8, import_url: null }]));
    expect(list).not.toContain('s3cr3t-pass');
    expect(list).not.toContain('GR1348941secret');
    // Nothing to take out: the text is kept as it came, unparsed.
    const plain = '{"id":9,"import_url":null}';
    expect(withoutProjectSecrets(plain)).toBe(plain);
  });
});

describe("a caller's Cache-Control", () => {
  it.each([
    ['no-cache', 0],
    ['no-store', 0],
    ['max-age=0', 0],
    ['max-age=30', 30_000],
    ['private, max-age=3, max-age=9', 3_000],
    ['max-age=-1', undefined],
    ['max-age=abc', undefined],
    ['public', undefined],
    ['', undefined],
  ])('%j asks for answers no older than %s ms', (header, ms) => {
    expect(requestedMaxAgeMs(header)).toBe(ms);
  });
});
