/**
 * The GitLab REST v4 client for one GraphQL request: it carries that
 * request's credentials and abort signal, and knows GitLab's paths, query
 * parameters, pagination headers and not-found answers.
 */
import { LRUCache } from 'lru-cache';
import { InputError, UpstreamError } from '../../errors.js';
import type { Claim, RequestScope } from '../../request-scope.js';
import {
  codeForStatus,
  multipartBody,
  upstreamMessage,
  type HttpClient,
  type QueryValue,
  type StreamResponse,
  type UpstreamRequest,
  type UpstreamResponse,
} from '../http.js';
import { MAX_PAGE_SIZE, type Page } from '../pagination.js';
import type { RelayHead, RelaySink } from '../relay.js';
import type {
  BridgeRecord,
  CommitRecord,
  HookRecord,
  JobRecord,
  LanguagesRecord,
  PipelineRecord,
  PipelineVariableRecord,
  ProjectRecord,
  ProjectUserRecord,
  PushRuleRecord,
  TestReportSummaryRecord,
  UploadRecord,
} from './records.js';

/** A write body in GitLab's parameter names; undefined values are left out. */
export type WriteParams = Readonly<Record<string, unknown>>;

/** What a star or unstar did: GitLab answers 304 when there was nothing to change. */
export interface ToggleResult {
  project: ProjectRecord | null;
  changed: boolean;
}

/** The filters GET /projects, /users/:id/projects and /projects/:id/forks share. */
export interface ProjectListFilters {
  archived?: boolean;
  visibility?: string;
  order_by?: string;
  sort?: string;
  search?: string;
  simple?: boolean;
  owned?: boolean;
  membership?: boolean;
  starred?: boolean;
  statistics?: boolean;
  with_issues_enabled?: boolean;
  with_merge_requests_enabled?: boolean;
  with_programming_language?: string;
  min_access_level?: number;
  wiki_checksum_failed?: boolean;
  repository_checksum_failed?: boolean;
  /** custom_attributes[key]=value filters (admins only). */
  custom_attributes?: Readonly<Record<string, string>>;
}

export interface PageRequest {
  page: number;
  perPage: number;
}

/** A page read by keyset (`pagination=keyset`): at most `limit` items after the one whose id is `after`. */
export interface KeyRequest {
  after: number;
  limit: number;
}

export interface ProjectReadOptions {
  statistics?: boolean;
  license?: boolean;
}

/** Header names GitLab reads credentials from, as forwarded. */
export const GITLAB_CREDENTIAL_HEADERS = ['authorization', 'private-token', 'sudo', 'job-token'] as const;

function listQuery(filters: ProjectListFilters, page: PageRequest | KeyRequest): Record<string, QueryValue> {
  const { custom_attributes: custom, ...plain } = filters;
  const query: Record<string, QueryValue> = { ...plain, ...projectPaging(plain.sort, page) };
  for (const [key, value] of Object.entries(custom ?? {})) query[`custom_attributes[${key}]`] = value;
  return query;
}

/**
 * Offset or keyset parameters of a project list. Keyset serves projects in id
 * order only (lib/gitlab/pagination/keyset.rb) and filters by `id_after` or
 * `id_before`; one item more than asked tells whether a next page exists,
 * which GitLab's keyset Link (sent after every page that is not empty) cannot.
 */
function projectPaging(sort: string | undefined, page: PageRequest | KeyRequest): Record<string, QueryValue> {
  if (!('after' in page)) return { page: page.page, per_page: page.perPage };
  const direction = sort === 'asc' ? 'asc' : 'desc';
  const bound = direction === 'asc' ? 'id_after' : 'id_before';
  return { pagination: 'keyset', order_by: 'id', sort: direction, [bound]: page.after, per_page: Math.min(page.limit + 1, MAX_PAGE_SIZE) };
}

/** A keyset page cut to what was asked: a next page exists when more came than asked, or a full page of 100 links on. */
function keyPage<T>(page: Page<T>, request: PageRequest | KeyRequest): Page<T> {
  if (!('after' in request)) return page;
  const more = page.items.length > request.limit;
  return { items: page.items.slice(0, request.limit), total: null, hasNext: more || (page.items.length === request.limit && page.hasNext) };
}

/**
 * GitLab's own keyset cursor for the jobs after `after` (Keyset::Paginator:
 * URL-safe Base64 of the order's values as strings, `_kd` the direction).
 */
export function jobsCursor(after: number): string {
  return Buffer.from(JSON.stringify({ id: String(after), _kd: 'n' }))
    .toString('base64')
    .replace(/\+/g, '-')
    .replace(/\//g, '_');
}

/**
 * GitLab's 405 past its offset limit (`offset_pagination_limit`, 50,000 on
 * gitlab.com; lib/api/helpers/pagination_strategies.rb), said as what the
 * caller can do about it.
 */
async function withinOffsetLimit<T>(read: Promise<T>, remedy: string): Promise<T> {
  try {
    return await read;
  } catch (error) {
    const limit = error instanceof UpstreamError && error.upstream.status === 405 ? /maximum allowed offset of (\d+)/.exec(String(error.message)) : null;
    if (!limit) throw error;
    throw new InputError(`GitLab pages this list by offset only up to item ${Number(limit[1]).toLocaleString('en-US')}. ${remedy}`, ['after']);
  }
}

const PROJECT_REMEDY = 'Order it by id (orderBy: ID) and page forward with first and after: those pages are read by keyset, at any depth.';
const JOB_REMEDY = 'Page forward with first and after: those pages are read by keyset, at any depth.';

function toPage<T>(response: UpstreamResponse<T[]>): Page<T> {
  // X-Total is omitted above 10,000 items and on lists GitLab never counts (jobs).
  const totalHeader = response.headers['x-total'];
  const total = totalHeader !== undefined && /^\d+$/.test(totalHeader) ? Number(totalHeader) : null;
  const next = response.headers['x-next-page'];
  const hasNext = next !== undefined ? next.trim() !== '' : /rel="next"/.test(response.headers.link ?? '');
  return { items: listItems(response), total, hasNext };
}

/**
 * The records of a list answer. Anything but a list (an object where a list
 * belongs), or an item that is not a record with an id, is GitLab's error:
 * it fails the list's field, never an empty page or a node without an id.
 */
function listItems<T>(response: UpstreamResponse<T[]>): T[] {
  const where = { name: 'gitlab', status: response.status, method: 'GET', path: '' };
  if (!Array.isArray(response.body)) throw new UpstreamError('GitLab sent something other than a list where a list belongs.', 'UPSTREAM_ERROR', where);
  const bad = response.body.findIndex((item: unknown) => {
    const id = typeof item === 'object' && item !== null && !Array.isArray(item) ? (item as { id?: unknown }).id : undefined;
    return !(typeof id === 'number' || (typeof id === 'string' && id !== ''));
  });
  if (bad >= 0) throw new UpstreamError(`GitLab sent item ${bad + 1} of a list that is not a record with an id.`, 'UPSTREAM_ERROR', where);
  return response.body;
}

/** One projection per field list: reads in flight that keep the same fields are shared (http.ts shares only reads decoded alike). */
const projections = new LRUCache<string, (body: unknown) => unknown>({ max: 256 });

/** Cuts each record of a list to `fields` and its id; anything but a list of records (an error body) passes as it is. */
function keepFields(fields: readonly (keyof JobRecord)[]): (body: unknown) => unknown {
  const key = fields.join(',');
  let projection = projections.get(key);
  if (!projection) {
    projection = projectFields(fields);
    projections.set(key, projection);
  }
  return projection;
}

function projectFields(fields: readonly (keyof JobRecord)[]): (body: unknown) => unknown {
  return (body) => {
    if (!Array.isArray(body)) return body;
    return body.map((record: unknown) => {
      if (typeof record !== 'object' || record === null) return record;
      const full = record as Record<string, unknown>;
      const kept: Record<string, unknown> = { id: full.id };
      for (const field of fields) if (field in full) kept[field] = full[field];
      return kept;
    });
  };
}

/**
 * Whether a 404 body is GitLab's answer to a Sudo user it does not know
 * (`404 User with ID or username 'x' Not Found`): that is an error for every
 * read, not a resource that does not exist.
 */
function isSudoNotFound(body: unknown): boolean {
  const message = body && typeof body === 'object' ? (body as { message?: unknown }).message : undefined;
  return typeof message === 'string' && /^404 User with ID or username .* Not Found$/.test(message);
}

/**
 * Whether a 404 is GitLab's own: its API says `{"message": "404 Project Not
 * Found"}` (`not_found!`) or `{"error": "404 Not Found"}` (a route it does not
 * have). Anything else (an HTML page, an empty body, another server's JSON)
 * comes from something that is not GitLab's API: GITLAB_URL points elsewhere.
 */
function isGitlabNotFound(body: unknown): boolean {
  if (!body || typeof body !== 'object') return false;
  const { message, error } = body as { message?: unknown; error?: unknown };
  return (typeof message === 'string' && message.startsWith('404')) || error === '404 Not Found';
}

/** GitLab's router's answer to a path it has no route for (a missing record says `{"message": "404 … Not Found"}` instead). */
function isRouteMissing(body: unknown): boolean {
  return !!body && typeof body === 'object' && (body as { error?: unknown }).error === '404 Not Found';
}

/** The GitLab upstreams (one per configured instance) seen without `…/trigger_jobs`: older than 19.2. */
const withoutTriggerJobs = new WeakSet<HttpClient>();

/** A lookup's 404 that did not come from GitLab's API: said, not read as "no such thing". */
function notGitlab(error: UpstreamError): UpstreamError {
  return new UpstreamError(
    "GitLab answered 404 with a body that is not GitLab's API: GITLAB_URL must be the instance's address (its API is read at /api/v4 under it), without a path of its own unless GitLab is installed under one.",
    'UPSTREAM_ERROR',
    error.upstream,
  );
}

/** GitLab's job record does not name its project; every job path needs it, so the client adds it. */
function withProject(job: JobRecord, projectId: number): JobRecord {
  // A stored answer's parsed form is shared and frozen: copied. One parsed for this call alone gets the field set.
  if (Object.isFrozen(job)) return { ...job, project_id: projectId };
  job.project_id = projectId;
  return job;
}

export class GitlabClient {
  constructor(
    private readonly http: HttpClient,
    /** Credential headers of the caller, forwarded on every call. */
    private readonly credentials: Readonly<Record<string, string>>,
    private readonly signal?: AbortSignal,
    /** The request the calls serve (its id and trace context go upstream); none for pollers. */
    private readonly scope?: RequestScope,
    /** Reads for no caller waiting on them (pollers, log watches): they yield first when the call budget runs low. */
    private readonly background = false,
    /** The field whose resolver reads with this client (schema/claims.ts). */
    private readonly claim?: Claim,
  ) {}

  /** This caller's client for one field's resolver: what it reads is noted with `claim` too. */
  claimedBy(claim: Claim): GitlabClient {
    return new GitlabClient(this.http, this.credentials, this.signal, this.scope, this.background, claim);
  }

  /** True when the caller sent no credential: GitLab then answers with public data only. */
  get anonymous(): boolean {
    return !this.credentials.authorization && !this.credentials['private-token'];
  }

  /**
   * GET /user: whether GitLab accepts the credentials (false on 401 or 403;
   * other failures throw). A job token alone is not checked: /user does not
   * take one, and every read checks it anyway. A 404 counts as accepted:
   * GitLab authenticates before routing, so a server without /user (the
   * sandbox) still answers 401 to a bad token.
   */
  async verifyCredentials(): Promise<boolean> {
    if (this.anonymous) return this.credentials['job-token'] !== undefined;
    try {
      await this.get<unknown>(['user']);
      return true;
    } catch (error) {
      if (error instanceof UpstreamError && error.code === 'NOT_FOUND') return true;
      if (error instanceof UpstreamError && (error.code === 'UNAUTHENTICATED' || error.code === 'FORBIDDEN')) return false;
      throw error;
    }
  }

  /** GET /projects/:id by number or full path; null when GitLab says 404. */
  async getProject(id: number | string, options: ProjectReadOptions = {}): Promise<ProjectRecord | null> {
    return this.orNull(
      this.get<ProjectRecord>(['projects', id], {
        statistics: options.statistics || undefined,
        license: options.license || undefined,
      }),
    );
  }

  /** GET /projects with the shared filters. */
  async listProjects(filters: ProjectListFilters, page: PageRequest | KeyRequest): Promise<Page<ProjectRecord>> {
    const response = await withinOffsetLimit(this.get<ProjectRecord[]>(['projects'], listQuery(filters, page)), PROJECT_REMEDY);
    return keyPage(toPage(response), page);
  }

  /** GET /users/:user_id/projects; the user is an id or a username. */
  async listUserProjects(user: string, filters: ProjectListFilters, page: PageRequest | KeyRequest): Promise<Page<ProjectRecord>> {
    const response = await withinOffsetLimit(this.get<ProjectRecord[]>(['users', user, 'projects'], listQuery(filters, page)), PROJECT_REMEDY);
    return keyPage(toPage(response), page);
  }

  /** GET /projects/:id/forks; the fork list has no with_programming_language filter. */
  async listForks(id: number | string, filters: ProjectListFilters, page: PageRequest | KeyRequest): Promise<Page<ProjectRecord>> {
    const { with_programming_language: _unsupported, ...rest } = filters;
    const response = await withinOffsetLimit(this.get<ProjectRecord[]>(['projects', id, 'forks'], listQuery(rest, page)), PROJECT_REMEDY);
    return keyPage(toPage(response), page);
  }

  /** GET /projects/:id/users, optionally filtered by `search`. */
  async listProjectUsers(id: number | string, search: string | undefined, page: PageRequest): Promise<Page<ProjectUserRecord>> {
    return toPage(await this.get<ProjectUserRecord[]>(['projects', id, 'users'], { search, page: page.page, per_page: page.perPage }));
  }

  /** GET /projects/:id/languages; null when the project is not visible. */
  async getLanguages(id: number | string): Promise<LanguagesRecord | null> {
    return this.orNull(this.get<LanguagesRecord>(['projects', id, 'languages']));
  }

  // --- project writes -------------------------------------------------

  /** POST /projects, or POST /projects/user/:user_id for another user (admins only). */
  async createProject(params: WriteParams, forUser?: number, files?: Readonly<Record<string, File>>): Promise<ProjectRecord> {
    const path = forUser === undefined ? ['projects'] : ['projects', 'user', forUser];
    return (await this.send<ProjectRecord>('POST', path, params, files)).body;
  }

  /** PUT /projects/:id. */
  async updateProject(id: number | string, params: WriteParams, files?: Readonly<Record<string, File>>): Promise<ProjectRecord> {
    return (await this.send<ProjectRecord>('PUT', ['projects', id], params, files)).body;
  }

  /**
   * DELETE /projects/:id; GitLab may answer 202 and delete later. With
   * `ifUnmodifiedSince`, GitLab answers 412 when the project changed after it.
   */
  async deleteProject(id: number | string, ifUnmodifiedSince?: Date): Promise<void> {
    const headers = ifUnmodifiedSince ? { ...this.credentials, 'if-unmodified-since': ifUnmodifiedSince.toUTCString() } : this.credentials;
    await this.http.json({ method: 'DELETE', path: ['projects', id], headers, signal: this.signal, scope: this.scope });
  }

  /** POST /projects/:id/archive or /unarchive; both are idempotent. */
  async setArchived(id: number | string, archived: boolean): Promise<ProjectRecord> {
    return (await this.send<ProjectRecord>('POST', ['projects', id, archived ? 'archive' : 'unarchive'])).body;
  }

  /** POST /projects/:id/star or /unstar; a 304 means it already was. */
  async setStarred(id: number | string, starred: boolean): Promise<ToggleResult> {
    const response = await this.send<ProjectRecord | null>('POST', ['projects', id, starred ? 'star' : 'unstar']);
    return { project: response.status === 304 ? null : response.body, changed: response.status !== 304 };
  }

  /** POST /projects/:id/fork: asynchronous, the new project's import_status tells when it is done. */
  async forkProject(id: number | string, params: WriteParams): Promise<ProjectRecord> {
    return (await this.send<ProjectRecord>('POST', ['projects', id, 'fork'], params)).body;
  }

  /** POST /projects/:id/fork/:forked_from_id. */
  async createForkRelation(id: number | string, forkedFromId: number | string): Promise<ProjectRecord | null> {
    return (await this.send<ProjectRecord | null>('POST', ['projects', id, 'fork', forkedFromId])).body;
  }

  /** DELETE /projects/:id/fork. */
  async deleteForkRelation(id: number | string): Promise<void> {
    await this.send('DELETE', ['projects', id, 'fork']);
  }

  /** POST /projects/:id/share. */
  async shareProject(id: number | string, params: WriteParams): Promise<void> {
    await this.send('POST', ['projects', id, 'share'], params);
  }

  /** DELETE /projects/:id/share/:group_id. */
  async unshareProject(id: number | string, groupId: number): Promise<void> {
    await this.send('DELETE', ['projects', id, 'share', groupId]);
  }

  /** PUT /projects/:id/transfer. */
  async transferProject(id: number | string, namespace: number | string): Promise<ProjectRecord> {
    return (await this.send<ProjectRecord>('PUT', ['projects', id, 'transfer'], { namespace })).body;
  }

  /** POST /projects/:id/housekeeping. */
  async startHousekeeping(id: number | string): Promise<void> {
    await this.send('POST', ['projects', id, 'housekeeping']);
  }

  /** POST /projects/:id/mirror/pull (paid tier). */
  async startMirrorPull(id: number | string): Promise<void> {
    await this.send('POST', ['projects', id, 'mirror', 'pull']);
  }

  /** POST /projects/:id/uploads, the file streamed as multipart. */
  async uploadFile(id: number | string, file: Blob, filename: string): Promise<UploadRecord> {
    const body = multipartBody([{ name: 'file', file, filename }]);
    return (
      await this.http.json<UploadRecord>({
        method: 'POST',
        path: ['projects', id, 'uploads'],
        body,
        headers: this.credentials,
        signal: this.signal,
        scope: this.scope,
      })
    ).body;
  }

  // --- hooks and push rules ---------------------------------------------

  /** GET /projects/:id/hooks. */
  async listHooks(id: number | string, page: PageRequest): Promise<Page<HookRecord>> {
    return toPage(await this.get<HookRecord[]>(['projects', id, 'hooks'], { page: page.page, per_page: page.perPage }));
  }

  /** GET /projects/:id/hooks/:hook_id; null when it does not exist. */
  async getHook(id: number | string, hookId: number): Promise<HookRecord | null> {
    return this.orNull(this.get<HookRecord>(['projects', id, 'hooks', hookId]));
  }

  /** POST /projects/:id/hooks. */
  async createHook(id: number | string, params: WriteParams): Promise<HookRecord> {
    return (await this.send<HookRecord>('POST', ['projects', id, 'hooks'], params)).body;
  }

  /** PUT /projects/:id/hooks/:hook_id. */
  async updateHook(id: number | string, hookId: number, params: WriteParams): Promise<HookRecord> {
    return (await this.send<HookRecord>('PUT', ['projects', id, 'hooks', hookId], params)).body;
  }

  /** DELETE /projects/:id/hooks/:hook_id: the removed hook, or null when there was none. */
  async deleteHook(id: number | string, hookId: number): Promise<HookRecord | null> {
    return this.orNull(this.send<HookRecord | null>('DELETE', ['projects', id, 'hooks', hookId]));
  }

  /** GET /projects/:id/push_rule; null when the project has none. */
  async getPushRule(id: number | string): Promise<PushRuleRecord | null> {
    return this.orNull(this.get<PushRuleRecord | null>(['projects', id, 'push_rule']));
  }

  /** POST (create) or PUT (edit) /projects/:id/push_rule. */
  async savePushRule(id: number | string, params: WriteParams, create: boolean): Promise<PushRuleRecord> {
    return (await this.send<PushRuleRecord>(create ? 'POST' : 'PUT', ['projects', id, 'push_rule'], params)).body;
  }

  /** DELETE /projects/:id/push_rule (idempotent). */
  async deletePushRule(id: number | string): Promise<void> {
    await this.send('DELETE', ['projects', id, 'push_rule']);
  }

  // --- pipelines -------------------------------------------------------------

  /** GET /projects/:id/pipelines with Ci::PipelinesFinder's filters (snake_case, as GitLab names them). */
  async listPipelines(id: number, filters: Record<string, QueryValue>, page: PageRequest): Promise<Page<PipelineRecord>> {
    const result = toPage(await this.get<PipelineRecord[]>(['projects', id, 'pipelines'], { ...filters, page: page.page, per_page: page.perPage }));
    return { ...result, items: result.items.map((pipeline) => ({ ...pipeline, project_id: pipeline.project_id ?? id })) };
  }

  /** GET /projects/:id/pipelines/:pipeline_id; null when it does not exist. */
  async getPipeline(id: number, pipelineId: number): Promise<PipelineRecord | null> {
    const pipeline = await this.orNull(this.get<PipelineRecord>(['projects', id, 'pipelines', pipelineId]));
    return pipeline && { ...pipeline, project_id: pipeline.project_id ?? id };
  }

  /** POST /projects/:id/pipeline (singular, as GitLab routes it): a new pipeline for `ref`, with variables. */
  async createPipeline(id: number | string, ref: string, variables: readonly { key: string; value: string; variable_type: string }[]): Promise<PipelineRecord> {
    // GitLab's answer carries project_id, which is what its node id needs: the project may have been named by path.
    return (await this.send<PipelineRecord>('POST', ['projects', id, 'pipeline'], { ref, variables: variables.length ? [...variables] : undefined })).body;
  }

  /** POST /projects/:id/pipelines/:pipeline_id/{retry,cancel}: the pipeline after the action. */
  async pipelineAction(id: number, pipelineId: number, action: 'retry' | 'cancel'): Promise<PipelineRecord> {
    const body = (await this.send<PipelineRecord>('POST', ['projects', id, 'pipelines', pipelineId, action])).body;
    return { ...body, project_id: body.project_id ?? id };
  }

  /** DELETE /projects/:id/pipelines/:pipeline_id (Owner). */
  async deletePipeline(id: number, pipelineId: number): Promise<void> {
    await this.send('DELETE', ['projects', id, 'pipelines', pipelineId]);
  }

  /** GET /projects/:id/repository/commits/:sha; null when there is no such commit. */
  async getCommit(id: number, sha: string): Promise<CommitRecord | null> {
    return this.orNull(this.get<CommitRecord>(['projects', id, 'repository', 'commits', sha]));
  }

  /** GET …/variables: the variables the pipeline was created with. */
  async listPipelineVariables(id: number, pipelineId: number): Promise<PipelineVariableRecord[]> {
    return (await this.get<PipelineVariableRecord[]>(['projects', id, 'pipelines', pipelineId, 'variables'])).body;
  }

  /** GET …/test_report_summary. */
  async getTestReportSummary(id: number, pipelineId: number): Promise<TestReportSummaryRecord> {
    return (await this.get<TestReportSummaryRecord>(['projects', id, 'pipelines', pipelineId, 'test_report_summary'])).body;
  }

  /**
   * GET …/trigger_jobs (GitLab 19.2+), else …/bridges, which 19.2 deprecates:
   * the jobs that trigger downstream pipelines. An instance without the new
   * route answers it with its router's 404 once; from then on this gateway
   * reads the old one there.
   */
  async listPipelineBridges(id: number, pipelineId: number, scope: readonly string[] | undefined, page: PageRequest): Promise<Page<BridgeRecord>> {
    const query = { scope: scope?.length ? scope : undefined, page: page.page, per_page: page.perPage };
    if (!withoutTriggerJobs.has(this.http)) {
      try {
        return toPage(await this.get<BridgeRecord[]>(['projects', id, 'pipelines', pipelineId, 'trigger_jobs'], query));
      } catch (error) {
        if (!(error instanceof UpstreamError && error.code === 'NOT_FOUND' && isRouteMissing(error.body))) throw error;
        withoutTriggerJobs.add(this.http);
      }
    }
    return toPage(await this.get<BridgeRecord[]>(['projects', id, 'pipelines', pipelineId, 'bridges'], query));
  }

  // --- jobs ----------------------------------------------------------------

  /**
   * GET /projects/:id/jobs, or a pipeline's jobs; `scope` filters by status.
   * With `fields`, each record keeps only those fields and its id: the rest
   * is dropped as the page is parsed (see UpstreamRequest.select).
   */
  async listJobs(
    id: number,
    scope: readonly string[] | undefined,
    page: PageRequest | KeyRequest,
    pipelineId?: number,
    fields?: readonly (keyof JobRecord)[],
  ): Promise<Page<JobRecord>> {
    const path = pipelineId === undefined ? ['projects', id, 'jobs'] : ['projects', id, 'pipelines', pipelineId, 'jobs'];
    // Keyset (project jobs only, newest first: lib/gitlab/pagination/cursor_based_keyset.rb) links on only while more follow.
    const paging =
      'after' in page ? { pagination: 'keyset', per_page: page.limit, cursor: jobsCursor(page.after) } : { page: page.page, per_page: page.perPage };
    const query = { scope: scope?.length ? scope : undefined, ...paging };
    const response = await withinOffsetLimit(this.get<JobRecord[]>(path, query, fields && keepFields(fields)), JOB_REMEDY);
    const result = toPage(response);
    return { ...result, items: result.items.map((job) => withProject(job, id)) };
  }

  /** GET /projects/:id/jobs/:job_id; null when it does not exist. */
  async getJob(id: number, jobId: number): Promise<JobRecord | null> {
    const job = await this.orNull(this.get<JobRecord>(['projects', id, 'jobs', jobId]));
    return job && withProject(job, id);
  }

  /** POST /projects/:id/jobs/:job_id/{cancel,retry,play,erase} or artifacts/keep. Retry answers with a new job on current GitLab. */
  async jobAction(id: number, jobId: number, action: 'cancel' | 'retry' | 'play' | 'erase' | 'keep'): Promise<JobRecord> {
    const path = action === 'keep' ? ['projects', id, 'jobs', jobId, 'artifacts', 'keep'] : ['projects', id, 'jobs', jobId, action];
    return withProject((await this.send<JobRecord>('POST', path)).body, id);
  }

  /** DELETE /projects/:id/jobs/:job_id/artifacts (Maintainer). */
  async deleteJobArtifacts(id: number, jobId: number): Promise<void> {
    await this.send('DELETE', ['projects', id, 'jobs', jobId, 'artifacts']);
  }

  /**
   * GET /projects/:id/jobs/:job_id/trace as text, for small logs; null when
   * the job has none. Larger than `maxBytes`: an UpstreamError that points to
   * the streaming route instead of buffering the whole log.
   */
  async getTrace(id: number, jobId: number, maxBytes: number): Promise<string | null> {
    const response = await this.download(['projects', id, 'jobs', jobId, 'trace'], {});
    const info = { name: 'gitlab', status: response.status, method: 'GET', path: `/api/v4/projects/${id}/jobs/${jobId}/trace` };
    if (response.status >= 300) {
      const text = await response.body.text();
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        // A non-JSON error body: the status alone says enough.
      }
      if (response.status === 404 && !isSudoNotFound(body)) return null;
      throw new UpstreamError(
        `GitLab answered ${response.status}${isSudoNotFound(body) ? `: ${upstreamMessage(body) ?? ''}` : ''}.`,
        codeForStatus(response.status),
        info,
        body,
      );
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        response.body.destroy();
        throw new UpstreamError(`The job log is larger than ${maxBytes} bytes: read it from traceUrl instead.`, 'BAD_USER_INPUT', info);
      }
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  /**
   * GET a binary resource as a stream, whatever the status: for a body read
   * whole (the job log); the download routes use `relay`. With `ifNoneMatch`,
   * GitLab answers 304 without a body while the resource is unchanged.
   */
  async download(path: readonly (string | number)[], query: Record<string, QueryValue>, range?: string, ifNoneMatch?: string): Promise<StreamResponse> {
    return this.http.stream({
      method: 'GET',
      path,
      query,
      headers: this.credentials,
      signal: this.signal,
      scope: this.scope,
      range,
      ifNoneMatch,
      background: this.background,
    });
  }

  /** GET a binary resource into the sink `onHead` returns (HttpClient.relay), whatever the status. */
  relay(
    path: readonly (string | number)[],
    query: Record<string, QueryValue>,
    range: string | undefined,
    onHead: (head: RelayHead) => RelaySink | null,
  ): Promise<void> {
    return this.http.relay({ method: 'GET', path, query, headers: this.credentials, signal: this.signal, scope: this.scope, range }, onHead);
  }

  private async get<T>(
    path: readonly (string | number)[],
    query?: Record<string, QueryValue>,
    select?: UpstreamRequest['select'],
  ): Promise<UpstreamResponse<T>> {
    return this.http.json<T>({
      method: 'GET',
      path,
      query,
      headers: this.credentials,
      signal: this.signal,
      scope: this.scope,
      claim: this.claim,
      select,
      background: this.background,
    });
  }

  /** A write: a JSON body, or multipart when files (an avatar) go with it. */
  private async send<T>(
    method: UpstreamRequest['method'],
    path: readonly (string | number)[],
    params?: WriteParams,
    files?: Readonly<Record<string, File>>,
  ): Promise<UpstreamResponse<T>> {
    const fields = Object.entries(params ?? {}).filter(([, v]) => v !== undefined && v !== null);
    let body: unknown = params === undefined ? undefined : Object.fromEntries(fields);
    if (files && Object.keys(files).length) {
      body = multipartBody([
        // GitLab reads arrays in forms as repeated name[]=value.
        ...fields.flatMap(([name, value]) =>
          Array.isArray(value) ? value.map((v) => ({ name: `${name}[]`, value: String(v) })) : [{ name, value: String(value) }],
        ),
        ...Object.entries(files).map(([name, file]) => ({ name, file, filename: file.name || name })),
      ]);
    }
    return this.http.json<T>({ method, path, body, headers: this.credentials, signal: this.signal, scope: this.scope });
  }

  /** The body, or null for a 404, unless the 404 is about the Sudo user rather than the resource. */
  private async orNull<T>(call: Promise<UpstreamResponse<T>>): Promise<T | null> {
    try {
      return (await call).body;
    } catch (error) {
      if (error instanceof UpstreamError && error.code === 'NOT_FOUND' && !isSudoNotFound(error.body)) {
        if (!isGitlabNotFound(error.body)) throw notGitlab(error);
        return null;
      }
      throw error;
    }
  }
}
