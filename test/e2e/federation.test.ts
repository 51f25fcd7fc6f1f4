/**
 * duograph as an Apollo Federation 2 subgraph: composed with a second small
 * subgraph (deployments) by @apollo/composition, the supergraph served
 * in-process by @apollo/gateway under Yoga, queries crossing both subgraphs
 * in both directions, and entities costing the same upstream calls through
 * the gateway as asked directly.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { useApolloFederation } from '@envelop/apollo-federation';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printSchemaSdl } from '../../src/schema/index.js';
import { composeSupergraph, CompositionError, duographSubgraph } from '../../src/server/supergraph.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startDeploymentsSubgraph, type DeploymentRecord, type DeploymentsSubgraph } from '../helpers/deployments-subgraph.js';
import { EntitiesDocument, ServiceSdlDocument } from '../operations/generated/graphql.js';

const HUBZILLA = { 'x-hubzilla-authorization': `Basic ${Buffer.from('demo:demo-pass').toString('base64')}` };
/** Projects the demo user sees (src/sandbox/gitlab/seed.ts): 30 of them. */
const VISIBLE = [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, ...Array.from({ length: 20 }, (_, i) => 14 + i).filter((id) => id !== 30)];
const gid = (id: number) => `gid://duograph/Project/${id}`;
/** 50 deployments over the 30 visible projects; the first one by the deploy-staging job of platform/core. */
const DEPLOYMENTS: DeploymentRecord[] = Array.from({ length: 50 }, (_, i) => ({
  id: `d${i + 1}`,
  environment: i % 2 ? 'production' : 'staging',
  projectId: gid(VISIBLE[i % VISIBLE.length] ?? 1),
  jobId: i === 0 ? 'gid://duograph/Job/1/1004' : null,
}));

type Body = { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };

let t: TestApp;
let deployments: DeploymentsSubgraph;
let supergraphSdl: string;
let gateway: ApolloGateway;
let yoga: YogaServerInstance<Record<string, unknown>, Record<string, unknown>>;

/** Posts a query to the supergraph gateway as the demo user. */
async function supergraph(query: string, variables?: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Body> {
  const response = await yoga.fetch('http://gateway/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'private-token': 'demo-token', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as Body;
}

// Composition and the gateway's query planner are seconds of CPU: a busy machine takes longer than the default hook bound.
beforeAll(async () => {
  t = await createTestApp();
  deployments = await startDeploymentsSubgraph(DEPLOYMENTS);
  supergraphSdl = composeSupergraph([duographSubgraph(t.url.href), { name: 'deployments', url: deployments.url, sdl: deployments.sdl }]);
  gateway = new ApolloGateway({
    supergraphSdl,
    buildService: ({ url }) =>
      new RemoteGraphQLDataSource({
        url,
        // The gateway forwards the caller's credentials, as a router's header propagation would.
        willSendRequest({ request, context }) {
          const incoming = (context as { request?: Request }).request?.headers;
          for (const name of ['private-token', 'x-hubzilla-authorization']) {
            const value = incoming?.get(name);
            if (value) request.http?.headers.set(name, value);
          }
        },
      }),
  });
  await gateway.load();
  yoga = createYoga({ plugins: [useApolloFederation({ gateway })], logging: false, graphiql: false, maskedErrors: false });
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  await deployments?.close();
  await t?.close();
});

describe('duograph as a federation subgraph', () => {
  it('answers _service { sdl } with the printed subgraph schema, @key directives included', async () => {
    const result = await t.run(ServiceSdlDocument);
    expect(result.data?._service.sdl).toBe(printSchemaSdl());
    for (const key of [
      'type ChannelItem implements Node\n  @key(fields: "id")',
      'type Job implements Node\n  @key(fields: "id")',
      'type Project implements Node\n  @key(fields: "id")',
      'type Xchan implements Node\n  @key(fields: "hash")',
    ]) {
      expect(result.data?._service.sdl).toContain(key);
    }
  });

  it('composes with a second subgraph into a supergraph that joins both', () => {
    expect(supergraphSdl).toContain('DUOGRAPH @join__graph(name: "duograph"');
    expect(supergraphSdl).toContain('DEPLOYMENTS @join__graph(name: "deployments"');
    expect(supergraphSdl).toMatch(
      /type Project implements Node\s+@join__implements\(graph: DUOGRAPH, interface: "Node"\)\s+@join__type\(graph: DEPLOYMENTS, key: "id"\)\s+@join__type\(graph: DUOGRAPH, key: "id"\)/,
    );
    expect(supergraphSdl).toContain('deployments: [Deployment!]! @join__field(graph: DEPLOYMENTS)');
  });

  // What the npm script runs (compiled on start by tsx), given the time a busy machine takes: the timeout is only a backstop.
  it('prints the supergraph SDL with `npm run supergraph` (duograph at PUBLIC_URL)', { timeout: 120_000 }, () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'supergraph'], {
      cwd: root,
      env: { ...process.env, PUBLIC_URL: 'https://graph.example.com' },
      encoding: 'utf8',
    });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('DUOGRAPH @join__graph(name: "duograph", url: "https://graph.example.com/graphql")');
    expect(result.stdout).toContain('@join__type(graph: DUOGRAPH, key: "hash")');
  });

  it('refuses to compose a subgraph that contradicts it, naming the conflict', () => {
    const clash = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])
      type Project @key(fields: "id") { id: ID! name: Int }
      type Query { anything: Project }`;
    expect(() => composeSupergraph([duographSubgraph(t.url.href), { name: 'clash', url: 'http://clash/graphql', sdl: clash }])).toThrow(CompositionError);
    expect(() => composeSupergraph([duographSubgraph(t.url.href), { name: 'clash', url: 'http://clash/graphql', sdl: clash }])).toThrow(/Project\.name/);
  });

  it('resolves Project, Job, Xchan and ChannelItem entities by their keys, null for unknown or foreign ids', async () => {
    const stream = await t.gql<{ channel: { stream: { nodes: { id: string; author: { hash: string } }[] } } }>(
      '{ channel { stream(first: 1) { nodes { id author { hash } } } } }',
      {},
      { headers: HUBZILLA },
    );
    const item = stream.data?.channel.stream.nodes[0];
    expect(item).toBeDefined();
    const result = await t.run(
      EntitiesDocument,
      {
        representations: [
          { __typename: 'Project', id: gid(1) },
          { __typename: 'Job', id: 'gid://duograph/Job/1/1002' },
          { __typename: 'Xchan', hash: item?.author.hash },
          { __typename: 'ChannelItem', id: item?.id },
          { __typename: 'Project', id: gid(10) },
          { __typename: 'Project', id: 'gid://duograph/Job/1/1002' },
          { __typename: 'Job', id: 'not a global id' },
        ],
      },
      { headers: HUBZILLA },
    );
    expect(result.errors).toBeUndefined();
    const entities = result.data?._entities ?? [];
    expect(entities[0]).toEqual({ __typename: 'Project', id: gid(1), name: 'Core', pathWithNamespace: 'platform/core' });
    expect(entities[1]).toEqual({ __typename: 'Job', id: 'gid://duograph/Job/1/1002', name: 'rspec', status: 'SUCCESS' });
    expect(entities[2]).toMatchObject({ __typename: 'Xchan', hash: item?.author.hash });
    expect(entities[3]).toMatchObject({ __typename: 'ChannelItem', id: item?.id });
    expect(entities.slice(4)).toEqual([null, null, null]);
  });

  it('crosses from duograph into the other subgraph and back: a project, its deployments, their jobs', async () => {
    t.resetCalls();
    const result = await supergraph(`{
      project(fullPath: "platform/core") {
        name
        deployments { id environment job { name status } }
      }
    }`);
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      project: {
        name: 'Core',
        deployments: [
          { id: 'd1', environment: 'staging', job: { name: 'deploy-staging', status: 'SUCCESS' } },
          { id: 'd31', environment: 'staging', job: null },
        ],
      },
    });
    // The project, then the job: each read once, with the caller's own token.
    expect(t.calls().map((c) => `${c.method} ${c.path} ${c.headers['private-token']}`)).toEqual([
      'GET /api/v4/projects/platform%2Fcore demo-token',
      'GET /api/v4/projects/1/jobs/1004 demo-token',
    ]);
  });

  it('crosses from the other subgraph into duograph: deployments and their projects', async () => {
    const result = await supergraph('{ deployments { id project { id name pathWithNamespace deployments { id } } } }');
    expect(result.errors).toBeUndefined();
    const list = (result.data?.deployments ?? []) as {
      id: string;
      project: { id: string; name: string; pathWithNamespace: string; deployments: { id: string }[] };
    }[];
    expect(list).toHaveLength(50);
    expect(list[0]).toEqual({
      id: 'd1',
      project: { id: gid(1), name: 'Core', pathWithNamespace: 'platform/core', deployments: [{ id: 'd1' }, { id: 'd31' }] },
    });
    expect(list[49]?.project.pathWithNamespace).toBeTruthy();
  });

  it('costs the same upstream calls for 50 projects through the supergraph as asking duograph directly', async () => {
    t.resetCalls();
    const viaGateway = await supergraph('{ deployments { project { name starCount } } }');
    expect(viaGateway.errors).toBeUndefined();
    const gatewayCalls = t
      .calls()
      .map((c) => c.path)
      .sort();

    t.resetCalls();
    const direct = await t.gql('query ($r: [_Any!]!) { _entities(representations: $r) { ... on Project { name starCount } } }', {
      r: DEPLOYMENTS.map((d) => ({ __typename: 'Project', id: d.projectId })),
    });
    expect(direct.errors).toBeUndefined();
    const directCalls = t
      .calls()
      .map((c) => c.path)
      .sort();

    // One read per distinct project (30), however many deployments name it, both ways.
    expect(new Set(directCalls).size).toBe(30);
    expect(directCalls).toHaveLength(30);
    expect(gatewayCalls).toEqual(directCalls);
  });
});
