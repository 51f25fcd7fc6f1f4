/**
 * The GitLab REST v4 client for one GraphQL request: it carries that
 * request's credentials and abort signal, and knows GitLab's paths, query
 * parameters, pagination headers and not-found answers.
 */
import { UpstreamError } from '../../errors.js';
import type { HttpClient, QueryValue, UpstreamResponse } from '../http.js';
import type { Page } from '../pagination.js';
import type { LanguagesRecord, ProjectRecord, ProjectUserRecord } from './records.js';

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

export interface ProjectReadOptions {
  statistics?: boolean;
  license?: boolean;
}

/** Header names GitLab reads credentials from, as forwarded. */
export const GITLAB_CREDENTIAL_HEADERS = ['authorization', 'private-token', 'sudo', 'job-token'] as const;

function listQuery(filters: ProjectListFilters, page: PageRequest): Record<string, QueryValue> {
  const { custom_attributes: custom, ...plain } = filters;
  const query: Record<string, QueryValue> = { ...plain, page: page.page, per_page: page.perPage };
  for (const [key, value] of Object.entries(custom ?? {})) query[`custom_attributes[${key}]`] = value;
  return query;
}

function toPage<T>(response: UpstreamResponse<T[]>): Page<T> {
  // X-Total is omitted above 10,000 items and on lists GitLab never counts (jobs).
  const totalHeader = response.headers['x-total'];
  const total = totalHeader !== undefined && /^\d+$/.test(totalHeader) ? Number(totalHeader) : null;
  const next = response.headers['x-next-page'];
  const hasNext = next !== undefined ? next.trim() !== '' : /rel="next"/.test(response.headers.link ?? '');
  return { items: Array.isArray(response.body) ? response.body : [], total, hasNext };
}

export class GitlabClient {
  constructor(
    private readonly http: HttpClient,
    /** Credential headers of the caller, forwarded on every call. */
    private readonly credentials: Readonly<Record<string, string>>,
    private readonly signal?: AbortSignal,
  ) {}

  /** True when the caller sent no credential: GitLab then answers with public data only. */
  get anonymous(): boolean {
    return !this.credentials.authorization && !this.credentials['private-token'];
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
  async listProjects(filters: ProjectListFilters, page: PageRequest): Promise<Page<ProjectRecord>> {
    return toPage(await this.get<ProjectRecord[]>(['projects'], listQuery(filters, page)));
  }

  /** GET /users/:user_id/projects; the user is an id or a username. */
  async listUserProjects(user: string, filters: ProjectListFilters, page: PageRequest): Promise<Page<ProjectRecord>> {
    return toPage(await this.get<ProjectRecord[]>(['users', user, 'projects'], listQuery(filters, page)));
  }

  /** GET /projects/:id/forks; the fork list has no with_programming_language filter. */
  async listForks(id: number | string, filters: ProjectListFilters, page: PageRequest): Promise<Page<ProjectRecord>> {
    const { with_programming_language: _unsupported, ...rest } = filters;
    return toPage(await this.get<ProjectRecord[]>(['projects', id, 'forks'], listQuery(rest, page)));
  }

  /** GET /projects/:id/users, optionally filtered by `search`. */
  async listProjectUsers(id: number | string, search: string | undefined, page: PageRequest): Promise<Page<ProjectUserRecord>> {
    return toPage(
      await this.get<ProjectUserRecord[]>(['projects', id, 'users'], { search, page: page.page, per_page: page.perPage }),
    );
  }

  /** GET /projects/:id/languages; null when the project is not visible. */
  async getLanguages(id: number | string): Promise<LanguagesRecord | null> {
    return this.orNull(this.get<LanguagesRecord>(['projects', id, 'languages']));
  }

  private async get<T>(path: readonly (string | number)[], query?: Record<string, QueryValue>): Promise<UpstreamResponse<T>> {
    return this.http.json<T>({ method: 'GET', path, query, headers: this.credentials, signal: this.signal });
  }

  private async orNull<T>(call: Promise<UpstreamResponse<T>>): Promise<T | null> {
    try {
      return (await call).body;
    } catch (error) {
      if (error instanceof UpstreamError && error.code === 'NOT_FOUND') return null;
      throw error;
    }
  }
}
