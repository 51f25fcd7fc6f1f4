/**
 * A second, small Federation 2 subgraph for the composition tests: it owns
 * `Deployment` (which references duograph's `Project` and `Job`) and adds
 * `Project.deployments` and `Job.deployments`, so queries and subscriptions
 * cross both subgraphs in both directions. Served by Yoga on an ephemeral port.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { createYoga } from 'graphql-yoga';

export const DEPLOYMENTS_SDL = `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])

"""A deployment of a project to an environment."""
type Deployment @key(fields: "id") {
  """Id of the deployment."""
  id: ID!
  """Environment deployed to."""
  environment: String!
  """The project deployed."""
  project: Project!
  """The CI job that deployed it, if any."""
  job: Job
}

"""A GitLab project, owned by duograph."""
type Project @key(fields: "id") {
  """Global id of the project."""
  id: ID!
  """Deployments of the project, oldest first."""
  deployments: [Deployment!]!
}

"""A CI job, owned by duograph."""
type Job @key(fields: "id") {
  """Global id of the job."""
  id: ID!
  """Deployments the job made, oldest first."""
  deployments: [Deployment!]!
}

type Query {
  """Every deployment."""
  deployments: [Deployment!]!
}
`;

export interface DeploymentRecord {
  id: string;
  environment: string;
  projectId: string;
  jobId: string | null;
}

export interface DeploymentsSubgraph {
  url: string;
  sdl: string;
  /** `_entities` representations this subgraph received, in order. */
  references: { __typename: string; id: string }[];
  close(): Promise<void>;
}

export async function startDeploymentsSubgraph(deployments: readonly DeploymentRecord[]): Promise<DeploymentsSubgraph> {
  const references: { __typename: string; id: string }[] = [];
  const schema = buildSubgraphSchema({
    typeDefs: parse(DEPLOYMENTS_SDL),
    resolvers: {
      Query: { deployments: () => deployments },
      Deployment: {
        project: (d: DeploymentRecord) => ({ __typename: 'Project', id: d.projectId }),
        job: (d: DeploymentRecord) => (d.jobId ? { __typename: 'Job', id: d.jobId } : null),
      },
      Project: {
        __resolveReference: (ref: { __typename: string; id: string }) => {
          references.push(ref);
          return { id: ref.id };
        },
        deployments: (p: { id: string }) => deployments.filter((d) => d.projectId === p.id),
      },
      Job: {
        __resolveReference: (ref: { __typename: string; id: string }) => {
          references.push(ref);
          return { id: ref.id };
        },
        deployments: (j: { id: string }) => deployments.filter((d) => d.jobId === j.id),
      },
    } as never,
  });
  const yoga = createYoga({ schema, graphqlEndpoint: '/graphql', logging: false, graphiql: false });
  const server = createServer(yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    sdl: DEPLOYMENTS_SDL,
    references,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
