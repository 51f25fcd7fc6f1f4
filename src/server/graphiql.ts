/**
 * The GraphiQL page: its example tabs, and the page itself served compressed
 * and cached. Yoga's GraphiQL inlines its whole 9 MB bundle in one HTML page
 * and renders it on every load, uncompressed and uncacheable; here it is
 * rendered once, on the first view (the bundle is tens of MB of heap: a
 * gateway nobody browses never loads it), compressed once with brotli and
 * gzip, and answered with an ETag, so a reload costs a 304.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gunzip, gzip } from 'node:zlib';

/** One example tab of GraphiQL: its operation, and the headers it runs with. */
export interface GraphiqlTab {
  query: string;
  headers?: string;
  variables?: string;
}

const GITLAB_TAB = `# GitLab: projects with their newest jobs, in one request.
# Agents: this graph as MCP tools at /mcp (docs/mcp.md).
query ProjectsWithJobs {
  projects(first: 5, orderBy: NAME, sort: ASC) {
    totalCount
    nodes {
      id
      pathWithNamespace
      visibility
      starCount
      jobs(first: 3) { nodes { restId name status pipeline { restId } } }
    }
  }
}
`;

const PIPELINE_TAB = `# CI: the newest pipelines of a project, each with its jobs
# and test totals.
query RecentPipelines {
  project(fullPath: "platform/core") {
    pipelines(first: 3) {
      nodes {
        id
        restId
        ref
        status
        user { username }
        jobs(first: 10) { nodes { name stage status } }
        testReportSummary { count failed }
      }
    }
  }
}
`;

const HUBZILLA_TAB = `# Hubzilla: the channel's own stream, newest threads first.
query ChannelStream {
  channel {
    nickname
    name
    stream(first: 5, order: NEWEST_FIRST) {
      nodes { title body createdAt author { name address } }
    }
  }
}
`;

const MUTATION_TAB = `# A mutation: star a project (run it twice: the second says
# nothing changed).
mutation StarPlayground {
  projectStar(input: { id: "demo/playground" }) {
    changed
    project { pathWithNamespace starCount }
    errors { message field code }
  }
}
`;

const SUBSCRIPTION_TAB = `# A subscription: every job of demo/playground, live. Its
# current state comes first, then each change.
subscription WatchPlaygroundJobs {
  jobStatusUpdated(projectId: "demo/playground") {
    name
    status
    pipeline { restId status }
  }
}
`;

const LOG_TAB = `# A job's log, live: its last lines, then every chunk
# the runner writes (the sandbox's job 1013 runs for 20
# minutes), and a last chunk marked complete when the job
# ends. A job that already ended sends its last lines,
# marked complete.
subscription FollowJobLog {
  jobLogAppended(projectId: "platform/core", jobId: "1013", tailLines: 10) {
    offset
    text
    complete
    status
    sections { name duration }
  }
}
`;

const SANDBOX_HINT = `# The sandbox's demo credentials are already in the headers
# below (Private-Token for GitLab, X-Hubzilla-Authorization
# for Hubzilla), and its demo pipeline runs again every
# minute.
`;

const OWN_SERVERS_HINT = `# Put your credentials in the headers below: Private-Token
# (or Authorization: Bearer) for GitLab,
# X-Hubzilla-Authorization for Hubzilla.
`;

/**
 * The example tabs: GitLab, CI pipelines, Hubzilla, a mutation, two subscriptions. `headers`
 * are the sandbox's demo credentials, or empty in front of real servers; the
 * first tab's hint says which, so no one looks for a demo token that is not there.
 */
export function graphiqlTabs(headers: Readonly<Record<string, string>>): GraphiqlTab[] {
  const sandbox = Object.keys(headers).length > 0;
  const shown = JSON.stringify(headers, null, 2);
  return [GITLAB_TAB, PIPELINE_TAB, HUBZILLA_TAB, MUTATION_TAB, SUBSCRIPTION_TAB, LOG_TAB].map((query, i) => ({
    query: i === 0 ? `${query.replace(/\n$/, '')}\n\n${sandbox ? SANDBOX_HINT : OWN_SERVERS_HINT}` : query,
    headers: shown,
  }));
}

interface Page {
  etag: string;
  br: Buffer;
  gzip: Buffer;
}

export interface GraphiqlPageOptions {
  /** The path GraphiQL is served at, the GraphQL endpoint itself. */
  path: string;
  /** What Yoga's renderGraphiQL takes: title, tabs, headers, endpoint. */
  render: Record<string, unknown>;
  /** Why there is no page (e.g. only trusted documents run): the browser gets this text, with 404, instead. */
  offReason?: string;
}

/** Whether the request asks for the page: a GET of the endpoint for HTML, as Yoga decides it. */
function wantsPage(req: IncomingMessage, path: string): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const pathname = new URL(req.url ?? '/', 'http://gateway').pathname.replace(/\/$/, '');
  return pathname === path && (req.headers.accept ?? '').includes('text/html');
}

/** The encoding to answer with, from Accept-Encoding: br, else gzip, else none. */
function encodingFor(req: IncomingMessage): 'br' | 'gzip' | null {
  const accepted = (req.headers['accept-encoding'] ?? '').toLowerCase();
  if (/\bbr\b/.test(accepted)) return 'br';
  if (/\bgzip\b/.test(accepted)) return 'gzip';
  return null;
}

/** Serves the GraphiQL page; `handle` returns false for any other request. */
export function graphiqlPage(options: GraphiqlPageOptions): { handle(req: IncomingMessage, res: ServerResponse): boolean } {
  let page: Promise<Page> | null = null;
  const build = async (): Promise<Page> => {
    const { renderGraphiQL } = await import('@graphql-yoga/render-graphiql');
    const html = Buffer.from(renderGraphiQL(options.render as Parameters<typeof renderGraphiQL>[0]));
    const [br, gz] = await Promise.all([
      // Quality 9: within a percent of 11 on this bundle, in a fifth of the time.
      promisify(brotliCompress)(html, { params: { [zlib.BROTLI_PARAM_QUALITY]: 9, [zlib.BROTLI_PARAM_SIZE_HINT]: html.length } }),
      promisify(gzip)(html, { level: 9 }),
    ]);
    return { etag: `"${createHash('sha256').update(html).digest('base64url').slice(0, 27)}"`, br, gzip: gz };
  };
  return {
    handle(req, res) {
      if (!wantsPage(req, options.path)) return false;
      if (options.offReason) {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end(`${options.offReason}\n`);
        return true;
      }
      page ??= build();
      void page.then(async (built) => {
        res.setHeader('vary', 'accept-encoding');
        res.setHeader('cache-control', 'no-cache');
        res.setHeader('etag', built.etag);
        if (req.headers['if-none-match'] === built.etag) {
          res.writeHead(304).end();
          return;
        }
        const encoding = encodingFor(req);
        // A client that takes neither encoding (rare: every browser takes both) gets it inflated on the spot.
        const body = encoding === 'br' ? built.br : encoding === 'gzip' ? built.gzip : await promisify(gunzip)(built.gzip);
        res.writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'content-length': String(body.length),
          ...(encoding ? { 'content-encoding': encoding } : {}),
        });
        res.end(req.method === 'HEAD' ? undefined : body);
      });
      return true;
    },
  };
}
