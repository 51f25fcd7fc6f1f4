/**
 * The hand-made GraphQL reference of the benchmark (bench/yoga-reference.ts
 * runs it as a process): what a team would write in an afternoon to serve
 * the CI dashboard from GraphQL. graphql-yoga over a small schema of its
 * own, the plain client's undici Pools (rest.ts), one DataLoader per request
 * for each project's jobs. No cache, no limits, no error mapping. The
 * bench-workloads test checks that it makes the gateway's calls and gives
 * its data.
 */
import DataLoader from 'dataloader';
import { createSchema, createYoga } from 'graphql-yoga';
import type { RestClient, RestGet } from './rest.js';

/** Operations the reference answers: the benchmark measures it on those workloads only. */
export const YOGA_OPERATIONS: ReadonlySet<string> = new Set(['ProjectsWithJobs']);

// biome-ignore lint/suspicious/noExplicitAny: REST records are read by key without a type, as a hand-written server does.
type Json = Record<string, any>;

interface Context {
  get: RestGet;
  jobs: DataLoader<string, Json[]>;
}

const typeDefs = /* GraphQL */ `
  enum ProjectOrder {
    ID
    NAME
  }
  enum Sort {
    ASC
    DESC
  }
  type Query {
    projects(first: Int = 20, search: String, orderBy: ProjectOrder = ID, sort: Sort = DESC): ProjectConnection!
  }
  type ProjectConnection {
    nodes: [Project!]!
  }
  type Project {
    id: ID!
    name: String!
    pathWithNamespace: String!
    jobs(first: Int = 20): JobConnection!
  }
  type JobConnection {
    nodes: [Job!]!
  }
  type Job {
    id: ID!
    name: String!
    stage: String!
    status: String!
    createdAt: String
    finishedAt: String
    pipeline: Pipeline
  }
  type Pipeline {
    restId: Float!
    ref: String
    status: String
  }
`;

const gid = (type: string, id: string | number): string => `gid://duograph/${type}/${id}`;
const upper = (value: unknown): string | null => (typeof value === 'string' ? value.toUpperCase() : null);
const iso = (value: unknown): string | null => (typeof value === 'string' ? new Date(value).toISOString() : null);

const resolvers = {
  Query: {
    projects: async (_: unknown, args: { first: number; search?: string; orderBy: string; sort: string }, { get }: Context) => ({
      nodes: await get<Json[]>('gitlab', 'projects', {
        order_by: args.orderBy.toLowerCase(),
        sort: args.sort.toLowerCase(),
        ...(args.search ? { search: args.search } : {}),
        page: 1,
        per_page: args.first,
        simple: 'true',
      }),
    }),
  },
  Project: {
    id: (p: Json) => gid('Project', p.id),
    pathWithNamespace: (p: Json) => p.path_with_namespace,
    jobs: async (p: Json, args: { first: number }, { jobs }: Context) => ({
      nodes: (await jobs.load(`${p.id} ${args.first}`)).map((job) => ({ ...job, projectId: p.id })),
    }),
  },
  Job: {
    id: (j: Json) => gid('Job', `${j.projectId}/${j.id}`),
    status: (j: Json) => upper(j.status),
    createdAt: (j: Json) => iso(j.created_at),
    finishedAt: (j: Json) => iso(j.finished_at),
    pipeline: (j: Json) => (j.pipeline ? { restId: j.pipeline.id, ref: j.pipeline.ref, status: upper(j.pipeline.status) } : null),
  },
};

/** The reference server over `rest`: answers the dashboard's operation with its own schema. */
export function yogaReference(rest: RestClient) {
  return createYoga<Record<string, unknown>, Context>({
    schema: createSchema<Record<string, unknown> & Context>({ typeDefs, resolvers }),
    graphiql: false,
    landingPage: false,
    logging: false,
    context: ({ request }) => {
      const token = request.headers.get('private-token');
      const get = rest.withCredentials(token ? { 'private-token': token } : {});
      // REST has no batch route: the loader dedupes and sends each project's page at once.
      const jobs = new DataLoader<string, Json[]>((keys) =>
        Promise.all(
          keys.map((key) => {
            const [id, first] = key.split(' ');
            return get<Json[]>('gitlab', `projects/${id}/jobs`, { page: 1, per_page: Number(first) });
          }),
        ),
      );
      return { get, jobs };
    },
  });
}
