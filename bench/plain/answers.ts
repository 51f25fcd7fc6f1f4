/**
 * The plain REST client's answers: for each workload (by operation name), the
 * same upstream calls the gateway makes, issued by hand with as much
 * concurrency as the data dependencies allow, and the same `data` object the
 * gateway returns. No GraphQL anywhere: this is the baseline a gateway is
 * measured against. The call-count tests check that both send identical calls
 * and build identical data.
 */
import type { RestGet } from './rest.js';

// REST records are read by key, as a hand-written client reads them.
// biome-ignore lint/suspicious/noExplicitAny: REST records are read by key without a type, as a hand-written client does.
type Json = Record<string, any>;

/** Answers one workload's operation with `get`, which carries the caller's credentials. */
export type Answer = (get: RestGet) => Promise<Json>;

const gid = (type: string, id: string | number): string => `gid://duograph/${type}/${id}`;
const upper = (value: unknown): string | null => (typeof value === 'string' ? value.toUpperCase() : null);
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** A timestamp as ISO 8601 UTC; GitLab already sends that form, which passes through unparsed. */
const iso = (value: unknown): string | null => (typeof value !== 'string' ? null : ISO_UTC.test(value) ? value : new Date(value).toISOString());

/** A Hubzilla `YYYY-MM-DD HH:MM:SS` (UTC) timestamp as ISO 8601; null for the zero dates. */
function hubDate(value: unknown): string | null {
  if (typeof value !== 'string' || value.startsWith('0000') || value.startsWith('0001')) return null;
  return new Date(`${value.replace(' ', 'T')}Z`).toISOString();
}

/** A page of projects; `simple` asks for GitLab's simple form where the answer needs no more. */
function projectPage(get: RestGet, search: string, perPage: number, page = 1, simple = true): Promise<Json[]> {
  return get<Json[]>('gitlab', 'projects', { order_by: 'id', sort: 'asc', search, page, per_page: perPage, ...(simple ? { simple: 'true' } : {}) });
}

function pipeline(job: Json): Json | null {
  return job.pipeline ? { restId: job.pipeline.id, ref: job.pipeline.ref, status: upper(job.pipeline.status) } : null;
}

/** `nodes { id name jobs(first: n) { nodes { id status } } }` of the scale series. */
async function projectsWithJobIds(get: RestGet, projects: Json[], jobsPerProject: number): Promise<Json[]> {
  return Promise.all(
    projects.map(async (p) => {
      const jobs = await get<Json[]>('gitlab', `projects/${p.id}/jobs`, { page: 1, per_page: jobsPerProject });
      return { id: gid('Project', p.id), name: p.name, jobs: { nodes: jobs.map((j) => ({ id: gid('Job', `${p.id}/${j.id}`), status: upper(j.status) })) } };
    }),
  );
}

function scale(count: number): Answer {
  return async (get) => ({ projects: { nodes: await projectsWithJobIds(get, await projectPage(get, 'bulk-project', count), 5) } });
}

export const ANSWERS: Readonly<Record<string, Answer>> = {
  async ProjectsWithJobs(get) {
    const projects = await projectPage(get, 'bulk-project', 100);
    const nodes = await Promise.all(
      projects.map(async (p) => {
        const jobs = await get<Json[]>('gitlab', `projects/${p.id}/jobs`, { page: 1, per_page: 20 });
        return {
          id: gid('Project', p.id),
          name: p.name,
          pathWithNamespace: p.path_with_namespace,
          jobs: {
            nodes: jobs.map((j) => ({
              id: gid('Job', `${p.id}/${j.id}`),
              name: j.name,
              stage: j.stage,
              status: upper(j.status),
              createdAt: iso(j.created_at),
              finishedAt: iso(j.finished_at),
              pipeline: pipeline(j),
            })),
          },
        };
      }),
    );
    return { projects: { nodes } };
  },

  async ForksSharingParents(get) {
    // owner and forked_from_project are not in the simple form.
    const projects = await projectPage(get, 'bulk-fork', 100, 1, false);
    // The embedded forked_from_project lacks visibility: read each distinct parent once.
    const parentIds = [...new Set(projects.map((p) => p.forked_from_project?.id).filter((id) => id !== undefined))];
    const parents = new Map(await Promise.all(parentIds.map(async (id) => [id, await get<Json>('gitlab', `projects/${id}`)] as const)));
    return {
      projects: {
        nodes: projects.map((p) => {
          const parent = p.forked_from_project;
          return {
            id: gid('Project', p.id),
            name: p.name,
            namespace: { fullPath: p.namespace.full_path, kind: p.namespace.kind },
            owner: p.owner ? { username: p.owner.username, name: p.owner.name } : null,
            forkedFrom: parent
              ? { id: gid('Project', parent.id), pathWithNamespace: parent.path_with_namespace, visibility: upper(parents.get(parent.id)?.visibility) }
              : null,
          };
        }),
      },
    };
  },

  async ProjectDetail(get) {
    const project = await get<Json>('gitlab', `projects/${encodeURIComponent('platform/core')}`);
    const [hooks, pushRule, languages, users, jobs] = await Promise.all([
      get<Json[]>('gitlab', `projects/${project.id}/hooks`, { page: 1, per_page: 20 }),
      get<Json | null>('gitlab', `projects/${project.id}/push_rule`),
      get<Record<string, number>>('gitlab', `projects/${project.id}/languages`),
      get<Json[]>('gitlab', `projects/${project.id}/users`, { page: 1, per_page: 20 }),
      get<Json[]>('gitlab', `projects/${project.id}/jobs`, { page: 1, per_page: 100 }),
    ]);
    return {
      project: {
        id: gid('Project', project.id),
        name: project.name,
        visibility: upper(project.visibility),
        hooks: { nodes: hooks.map((h) => ({ url: h.url, pushEvents: h.push_events, tagPushEvents: h.tag_push_events })) },
        pushRule: pushRule ? { commitMessageRegex: pushRule.commit_message_regex, maxFileSize: pushRule.max_file_size } : null,
        languages: Object.entries(languages)
          .map(([name, percentage]) => ({ name, percentage }))
          .sort((a, b) => b.percentage - a.percentage),
        users: { nodes: users.map((u) => ({ username: u.username, state: u.state })) },
        jobs: { nodes: jobs.map((j) => ({ id: gid('Job', `${project.id}/${j.id}`), name: j.name, status: upper(j.status), pipeline: pipeline(j) })) },
      },
    };
  },

  async ChannelStream(get) {
    const items = await get<Json[]>('hubzilla', 'channel/stream', { mindate: '2026-01-01 00:00:00' });
    const threads = new Map<string, Json[]>();
    for (const item of items) threads.set(item.message_top, [...(threads.get(item.message_top) ?? []), item]);
    const nodes = items.slice(0, 50).map((item) => {
      const top = item.message_id === item.message_top;
      const comments = (threads.get(item.message_top) ?? []).filter(
        (c) => c.message_id !== item.message_id && (top ? c.message_top === item.message_id : c.message_parent === item.message_id),
      );
      return {
        messageId: item.message_id,
        body: item.body,
        createdAt: hubDate(item.created),
        isComment: !top,
        author: item.author ? { name: item.author.name, address: item.author.address } : null,
        comments: comments.map((c) => ({ messageId: c.message_id, body: c.body, author: c.author ? { name: c.author.name } : null })),
      };
    });
    return { channel: { stream: { totalCount: items.length, nodes } } };
  },

  async FileListing(get) {
    // One record more than the page tells whether a next page exists (the hub sends no total).
    const { results } = await get<{ results: Json[] }>('hubzilla', 'files', { start: 0, records: 101 });
    return {
      channel: {
        files: {
          pageInfo: { hasNextPage: results.length > 100 },
          nodes: results.slice(0, 100).map((f) => {
            const isDirectory = Number(f.is_dir) === 1;
            return {
              hash: f.hash,
              filename: f.filename,
              contentType: f.filetype,
              size: Number(f.filesize),
              displayPath: f.display_path,
              isDirectory,
              createdAt: hubDate(f.created),
              downloadUrl: isDirectory ? null : `/downloads/hubzilla/files/${encodeURIComponent(f.hash)}`,
            };
          }),
        },
      },
    };
  },

  Scale10: scale(10),
  Scale100: scale(100),

  async Scale1000(get) {
    const pages = await Promise.all(Array.from({ length: 10 }, (_, n) => projectPage(get, 'bulk-project', 100, n + 1)));
    const nodes = await Promise.all(pages.map((projects) => projectsWithJobIds(get, projects, 5)));
    return Object.fromEntries(nodes.map((page, n) => [`page${n}`, { nodes: page }]));
  },
};
