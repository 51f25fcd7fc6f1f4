/**
 * Per-request DataLoaders over the GitLab client. GitLab has no batch read,
 * so a batch is one call per distinct key; what the loaders buy is that no
 * key is fetched twice in one request, and that project list results prime them.
 * Created once per GraphQL request: never shared across requests or callers.
 */
import { eachSettled } from '../batch.js';
import DataLoader from 'dataloader';
import type { GitlabClient, ProjectReadOptions } from './client.js';
import type { CommitRecord, JobRecord, PipelineRecord, LanguagesRecord, ProjectRecord } from './records.js';

function projectKey(id: number | string, options: ProjectReadOptions): string {
  return `${options.statistics ? 's' : '-'}${options.license ? 'l' : '-'}:${String(id)}`;
}

export class GitlabLoaders {
  /** Records that hold every field GitLab shows this caller (not a simple, embedded or fork-list form). */
  private readonly complete = new WeakSet<ProjectRecord>();
  /** Fork-list records and the project whose forks they are: GitLab's fork list leaves out forked_from_project. */
  private readonly forkParents = new WeakMap<ProjectRecord, number | string>();
  private readonly projects: DataLoader<string, ProjectRecord | null>;
  private readonly languageLoader: DataLoader<string, LanguagesRecord | null>;
  private readonly jobLoader: DataLoader<string, JobRecord | null>;
  private readonly pipelineLoader: DataLoader<string, PipelineRecord | null>;
  private readonly commitLoader: DataLoader<string, CommitRecord | null>;

  constructor(readonly client: GitlabClient) {
    this.projects = new DataLoader(
      (keys) =>
        eachSettled(
          keys.map(async (key) => {
            const options: ProjectReadOptions = { statistics: key[0] === 's', license: key[1] === 'l' };
            const record = await client.getProject(key.slice(3), options);
            // Primes the other spelling of the key (id or path), so both cost one call.
            if (record) this.markComplete([record], options);
            return record;
          }),
        ),
      { maxBatchSize: 100 },
    );
    this.languageLoader = new DataLoader((ids) => eachSettled(ids.map((id) => client.getLanguages(id))));
    this.jobLoader = new DataLoader((keys) =>
      eachSettled(
        keys.map((key) => {
          const [projectId, jobId] = key.split('/').map(Number);
          return client.getJob(projectId ?? 0, jobId ?? 0);
        }),
      ),
    );
    this.commitLoader = new DataLoader((keys) =>
      eachSettled(
        keys.map((key) => {
          const slash = key.indexOf('/');
          return client.getCommit(Number(key.slice(0, slash)), key.slice(slash + 1));
        }),
      ),
    );
    this.pipelineLoader = new DataLoader((keys) =>
      eachSettled(
        keys.map((key) => {
          const [projectId, pipelineId] = key.split('/').map(Number);
          return client.getPipeline(projectId ?? 0, pipelineId ?? 0);
        }),
      ),
    );
  }

  /** One pipeline of a project, in full (lists carry only the basic fields). */
  pipeline(projectId: number, pipelineId: number): Promise<PipelineRecord | null> {
    return this.pipelineLoader.load(`${projectId}/${pipelineId}`);
  }

  /** One commit of a project by SHA; null when there is none. */
  commit(projectId: number, sha: string): Promise<CommitRecord | null> {
    return this.commitLoader.load(`${projectId}/${sha}`);
  }

  /**
   * Records a pipeline an action answered with, so its fields cost no call;
   * only when it is whole: create, retry and cancel answer without `name`,
   * which then still costs one read.
   */
  primePipeline(record: PipelineRecord): void {
    if (!('name' in record)) return;
    this.pipelineLoader.clear(`${record.project_id}/${record.id}`).prime(`${record.project_id}/${record.id}`, record);
  }

  /**
   * One job of a project. Job lists do not prime this: they keep only the
   * fields their selection reads, and a lookup may need any.
   */
  job(projectId: number, jobId: number): Promise<JobRecord | null> {
    return this.jobLoader.load(`${projectId}/${jobId}`);
  }

  /** One project by id or full path, with statistics or license when asked. */
  project(id: number | string, options: ProjectReadOptions = {}): Promise<ProjectRecord | null> {
    return this.projects.load(projectKey(id, options));
  }

  /** The language shares of a project. */
  languages(id: number | string): Promise<LanguagesRecord | null> {
    return this.languageLoader.load(String(id));
  }

  /** Records that these fork-list items are forks of `parent`. */
  noteForks(records: readonly ProjectRecord[], parent: number | string): void {
    for (const record of records) this.forkParents.set(record, parent);
  }

  /** The project a fork-list item was listed as a fork of, if it came from a fork list. */
  forkParentOf(record: ProjectRecord): number | string | undefined {
    return this.forkParents.get(record);
  }

  /** Whether the record already holds every field this caller may see, so a missing field is really absent. */
  isComplete(record: ProjectRecord): boolean {
    return this.client.anonymous || this.complete.has(record);
  }

  /**
   * Records full-form list results as complete and primes the project loader
   * with them, under their id and their path, so later lookups cost no call.
   */
  markComplete(records: readonly ProjectRecord[], options: ProjectReadOptions): void {
    for (const record of records) {
      this.complete.add(record);
      const keys: string[] = [];
      for (const id of [record.id, record.path_with_namespace]) {
        if (id === undefined) continue;
        keys.push(projectKey(id, {}));
        if (options.statistics) keys.push(projectKey(id, { statistics: true }));
        if (options.license) keys.push(projectKey(id, { license: true }));
        if (options.statistics && options.license) keys.push(projectKey(id, options));
      }
      for (const key of keys) this.projects.prime(key, record);
    }
  }
}
