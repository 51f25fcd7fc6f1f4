/**
 * Live CI updates: the `jobStatusUpdated`, `pipelineStatusUpdated` and
 * `projectImportStatusUpdated` subscriptions (graphql-ws and SSE alike), and `jobStatusWebhookRegister`,
 * which points a project's webhook at this gateway so job changes arrive
 * pushed instead of polled. The hub (src/subscriptions) does the work:
 * resolvers only read arguments and hand over the caller's credentials.
 */
import { createGraphQLError } from 'graphql-yoga';
import { InputError, UpstreamError } from '../../errors.js';
import type { HookRecord } from '../../upstreams/gitlab/records.js';
import { MAX_PIPELINE_PAGES } from '../../subscriptions/hub.js';
import { isAnonymous } from '../../subscriptions/scope.js';
import { builder } from '../builder.js';
import { UPSTREAM_CALL } from '../cost.js';
import type { Context } from '../context.js';
import { restIdOf } from '../global-id.js';
import { runMutation, UserError, type UserErrorShape } from '../user-error.js';
import { ProjectHook } from './hook.js';
import type { LogChunk } from '../../subscriptions/job-log.js';
import type { SectionPart } from '../../subscriptions/log-parser.js';
import { Job, JobStatus, Pipeline, projectScopedIdFromArg, readStatus } from './job.js';
import { isProjectPath, Project, projectIdFromArg } from './project.js';

builder.subscriptionType({ description: 'Live updates, over graphql-ws (WebSocket) or Server-Sent Events at the GraphQL endpoint.' });

/** Refuses an anonymous subscriber when the server requires credentials, as a query would be by GitLab. */
function subscriber(ctx: Context) {
  if (ctx.live.requireCredentials && isAnonymous(ctx.live.credentials)) {
    throw createGraphQLError('This server requires GitLab credentials for subscriptions.', { extensions: { code: 'UNAUTHENTICATED' } });
  }
  return { credentials: ctx.live.credentials, client: ctx.gitlab.client, signal: ctx.live.signal };
}

/**
 * The upstream calls a subscription's start may cause: its first reads
 * (`reads`), and one lookup when the project is named by its full path. The
 * cost limit and the inbound allowance judge a subscription by it before it
 * runs, as a query; its polls are charged to its caller as they are sent.
 */
function startCost(projectId: unknown, reads: number): number {
  const byPath = typeof projectId === 'string' && isProjectPath(projectId);
  return reads + (byPath ? UPSTREAM_CALL : 0);
}

/** The numeric id of the project a subscription names by id, full path or global id; a path costs one lookup. */
async function numericProjectId(ctx: Context, id: string): Promise<number> {
  const key = projectIdFromArg(id, 'projectId');
  const numeric = restIdOf(key);
  if (numeric !== null) return numeric;
  const project = await ctx.gitlab.loaders.project(key);
  if (!project)
    throw new UpstreamError(`Project ${key.slice(0, 80)} was not found.`, 'NOT_FOUND', {
      name: 'gitlab',
      status: 404,
      method: 'GET',
      path: '/api/v4/projects/:id',
    });
  return project.id;
}

/**
 * The project a subscription watches: `projectId` when given, else the one
 * the job's or pipeline's global id carries (`gid://duograph/Job/7/…`), as
 * mutations take a global id alone.
 */
async function watchedProject(
  ctx: Context,
  projectId: string | null | undefined,
  scoped: { id: string | null | undefined; typename: 'Job' | 'Pipeline'; field: string }[],
): Promise<number> {
  if (projectId !== null && projectId !== undefined) return numericProjectId(ctx, projectId);
  for (const { id, typename, field } of scoped) {
    if (id === null || id === undefined) continue;
    if (restIdOf(id) !== null) break;
    return projectScopedIdFromArg(id, typename, undefined, field)[0];
  }
  const names = scoped.map((s) => s.field).join(' or ');
  throw new InputError(`projectId is required unless ${names} is a global id, which names its project.`, ['projectId']);
}

/** The `initialLimit` argument: null for the whole current state, else 0 (changes only) to 100. */
function initialLimitArg(value: number | null | undefined): number | null {
  if (value === null || value === undefined) return null;
  if (value < 0 || value > 100) throw new InputError('initialLimit must be between 0 and 100.', ['initialLimit']);
  return value;
}

/** A job or pipeline argument of a subscription: its global id (of the same project) or a numeric id. */
function idInProject(id: string, typename: 'Job' | 'Pipeline', projectId: number, field: string): number {
  const [owner, restId] = projectScopedIdFromArg(id, typename, projectId, field);
  if (owner !== projectId) throw new InputError(`The ${typename === 'Job' ? 'job' : 'pipeline'} belongs to another project.`, [field]);
  return restId;
}

/**
 * An event, or the error that ended the subscription: when the subscriber's
 * credentials lose access (a revoked token), the hub's stream ends with it,
 * and thrown here it reaches the subscriber as UNAUTHENTICATED, FORBIDDEN or
 * NOT_FOUND before the stream completes.
 */
function lastUnlessRevoked<T>(event: T | Error): T {
  if (event instanceof Error) throw event;
  return event;
}

const JobLogSection = builder.objectRef<SectionPart>('JobLogSection').implement({
  description: "A collapsible section of a job log (GitLab's `section_start`/`section_end` markers), as far as one chunk holds it.",
  fields: (t) => ({
    name: t.string({ description: 'Name of the section, e.g. `step_script`.', resolve: (s) => s.name }),
    startedAt: t.field({ type: 'DateTime', description: 'Time the section started.', resolve: (s) => s.startedAt }),
    endedAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the section ended; null while it runs on.', resolve: (s) => s.endedAt }),
    duration: t.float({ nullable: true, description: 'Seconds from start to end; null while the section runs on.', resolve: (s) => s.duration }),
    lines: t.stringList({ description: "The section's complete lines in this chunk, without colours.", resolve: (s) => s.lines }),
  }),
});

const JobLogChunk = builder.objectRef<LogChunk>('JobLogChunk').implement({
  description: 'A piece of a job log: the bytes from `offset` on, raw and readable, with the sections it touches.',
  fields: (t) => ({
    jobRestId: t.field({ type: 'SafeInt', description: 'Numeric id of the job.', resolve: (c) => c.jobId }),
    offset: t.field({ type: 'SafeInt', description: "Byte offset of the chunk's first byte in the whole log.", resolve: (c) => c.offset }),
    raw: t.string({ description: 'The log text as the runner wrote it: ANSI colours and section markers included.', resolve: (c) => c.raw }),
    text: t.string({ description: 'The log text without colours and section markers.', resolve: (c) => c.text }),
    sections: t.field({ type: [JobLogSection], description: 'The sections this chunk starts, continues or ends.', resolve: (c) => c.sections }),
    complete: t.boolean({ description: 'Indicates the last chunk: the job finished and the log is complete.', resolve: (c) => c.complete }),
    status: t.field({
      type: JobStatus,
      nullable: true,
      description: "The job's final status, on the last chunk.",
      resolve: (c) => readStatus(c.status),
    }),
  }),
});

builder.subscriptionFields((t) => ({
  jobLogAppended: t.field({
    type: JobLogChunk,
    // The job, then its log.
    complexity: (args) => startCost(args.projectId, 2 * UPSTREAM_CALL),
    description:
      "A job's log as it is written: the log so far (or its last `tailLines` lines), then each new chunk; the last chunk, once the job finished, has `complete: true` and the job's status, and holds what was written since the chunk before (empty only when that was nothing). A job already finished sends its log (or last lines) and ends, its last chunk marked complete. One read of the log per interval per job and credentials however many watch it, backing off while the log is quiet; only the new bytes are read where GitLab honours Range, else the whole log with what was sent skipped.",
    args: {
      projectId: t.arg.id({ description: 'Numeric id, full path or global id of the project; not needed when jobId is a global id.' }),
      jobId: t.arg.id({ required: true, description: 'Global id (which names its project) or numeric id of the job.' }),
      tailLines: t.arg.int({ description: 'Starts with only the last lines of the log so far (1 to 10,000) instead of all of it.' }),
    },
    subscribe: async (_root, args, ctx) => {
      const who = subscriber(ctx);
      const tail = args.tailLines ?? null;
      if (tail !== null && (tail < 1 || tail > 10_000)) throw new InputError('tailLines must be between 1 and 10000.', ['tailLines']);
      const projectId = await watchedProject(ctx, args.projectId, [{ id: args.jobId, typename: 'Job', field: 'jobId' }]);
      return ctx.live.hub.watchJobLog(who, { projectId, jobId: idInProject(String(args.jobId), 'Job', projectId, 'jobId'), tailLines: tail });
    },
    resolve: lastUnlessRevoked,
  }),
  jobStatusUpdated: t.field({
    type: Job,
    // The job, else a pipeline's jobs (a page of 100 at a time), else one page of the project's newest jobs.
    complexity: (args) => startCost(args.projectId, (args.jobId ?? null) === null && (args.pipelineId ?? null) !== null ? MAX_PIPELINE_PAGES : UPSTREAM_CALL),
    description:
      "Triggered when a CI job of the project changes status. Emits the current state first (the job; else the pipeline's jobs; else the project's 100 newest jobs; oldest first; `initialLimit` keeps only its newest), then the job on every status change. Fed by GitLab job and pipeline webhooks where they reach the gateway, else by one shared poller per project and credentials.",
    args: {
      projectId: t.arg.id({
        description: 'Numeric id, full path (e.g. `demo/playground`) or global id of the project; not needed when jobId or pipelineId is a global id.',
      }),
      jobId: t.arg.id({ description: 'Watches only this job: its global id or numeric id.' }),
      pipelineId: t.arg.id({ description: 'Watches only the jobs of this pipeline: its global id or numeric id.' }),
      statuses: t.arg({ type: [JobStatus], description: 'Emits only jobs in these statuses.' }),
      initialLimit: t.arg.int({
        description:
          'Most jobs of the current state sent first, the newest kept (0 to 100): 0 sends changes only. Without it, all of the current state comes first.',
      }),
    },
    subscribe: async (_root, args, ctx) => {
      const who = subscriber(ctx);
      const initialLimit = initialLimitArg(args.initialLimit);
      const projectId = await watchedProject(ctx, args.projectId, [
        { id: args.jobId, typename: 'Job', field: 'jobId' },
        { id: args.pipelineId, typename: 'Pipeline', field: 'pipelineId' },
      ]);
      const pipelineId =
        args.pipelineId === null || args.pipelineId === undefined ? null : idInProject(String(args.pipelineId), 'Pipeline', projectId, 'pipelineId');
      return ctx.live.hub.watchJobs(who, {
        projectId,
        jobId: args.jobId === null || args.jobId === undefined ? null : idInProject(String(args.jobId), 'Job', projectId, 'jobId'),
        pipelineId,
        statuses: args.statuses ?? null,
        initialLimit,
      });
    },
    resolve: lastUnlessRevoked,
  }),
  pipelineStatusUpdated: t.field({
    type: Pipeline,
    // The pipeline, else one page of the project's newest pipelines.
    complexity: (args) => startCost(args.projectId, UPSTREAM_CALL),
    description:
      "Triggered when a CI pipeline of the project changes status. Emits the current state first (the pipeline; else the project's 100 newest pipelines, of the ref if given; oldest first), then the pipeline on every status change, a retry's return to running included. Fed by GitLab job and pipeline webhooks where they reach the gateway, else by one shared poller per project and credentials.",
    args: {
      projectId: t.arg.id({
        description: 'Numeric id, full path (e.g. `demo/playground`) or global id of the project; not needed when pipelineId is a global id.',
      }),
      pipelineId: t.arg.id({ description: 'Watches only this pipeline: its global id or numeric id.' }),
      ref: t.arg.string({ description: 'Watches only the pipelines of this branch or tag.' }),
      statuses: t.arg({ type: [JobStatus], description: 'Emits only pipelines in these statuses.' }),
      initialLimit: t.arg.int({
        description:
          'Most pipelines of the current state sent first, the newest kept (0 to 100): 0 sends changes only. Without it, all of the current state comes first.',
      }),
    },
    subscribe: async (_root, args, ctx) => {
      const who = subscriber(ctx);
      const initialLimit = initialLimitArg(args.initialLimit);
      const projectId = await watchedProject(ctx, args.projectId, [{ id: args.pipelineId, typename: 'Pipeline', field: 'pipelineId' }]);
      return ctx.live.hub.watchPipelines(who, {
        projectId,
        pipelineId:
          args.pipelineId === null || args.pipelineId === undefined ? null : idInProject(String(args.pipelineId), 'Pipeline', projectId, 'pipelineId'),
        ref: args.ref ?? null,
        statuses: args.statuses ?? null,
        initialLimit,
      });
    },
    resolve: lastUnlessRevoked,
  }),
  projectImportStatusUpdated: t.field({
    type: Project,
    complexity: (args) => startCost(args.projectId, UPSTREAM_CALL),
    description:
      'Triggered when the import status of a project (a fork being created) changes. Emits the project now, then on every change of `importStatus`; completes once it is final (`finished`, `failed`, `canceled` or `none`).',
    args: { projectId: t.arg.id({ required: true, description: 'Numeric id, full path or global id of the project (the new fork).' }) },
    subscribe: async (_root, args, ctx) => {
      const who = subscriber(ctx);
      return ctx.live.hub.watchImport(who, await numericProjectId(ctx, String(args.projectId)));
    },
    resolve: lastUnlessRevoked,
  }),
}));

interface WebhookRegisterShape {
  hook: HookRecord | null;
  errors: UserErrorShape[];
}

const JobStatusWebhookRegisterPayload = builder.objectRef<WebhookRegisterShape>('JobStatusWebhookRegisterPayload').implement({
  description: 'Result of jobStatusWebhookRegister.',
  fields: (t) => ({
    hook: t.field({
      type: ProjectHook,
      nullable: true,
      description: 'The project hook that posts job and pipeline events to this gateway.',
      resolve: (p) => p.hook,
    }),
    errors: t.field({ type: [UserError], nullable: false, description: 'Why the mutation was refused; empty on success.', resolve: (p) => p.errors }),
  }),
});

builder.mutationField('jobStatusWebhookRegister', (t) =>
  t.field({
    type: JobStatusWebhookRegisterPayload,
    nullable: true,
    description:
      "Points a project webhook at this gateway's receiver (job and pipeline events, with the gateway's secret token), so `jobStatusUpdated` gets pushed changes instead of polling. Updates the hook already pointing there, if any (Maintainer role).",
    args: {
      input: t.arg({
        type: builder.inputType('JobStatusWebhookRegisterInput', {
          description: 'The project to register the receiver on.',
          fields: (f) => ({ projectId: f.id({ required: true, description: 'Global id, numeric id or full path of the project.' }) }),
        }),
        required: true,
        description: 'The project.',
      }),
    },
    resolve: async (_root, { input }, ctx) => {
      const url = ctx.live.receiver.url();
      if (url === null)
        return { hook: null, errors: [{ message: 'The gateway does not know its public URL: set PUBLIC_URL.', field: [], code: 'NOT_ALLOWED' as const }] };
      const projectId = projectIdFromArg(String(input.projectId), 'projectId');
      const { secret, signingToken } = ctx.live.receiver;
      const params = { url, token: secret, job_events: true, pipeline_events: true, push_events: false, enable_ssl_verification: true };
      const { result, errors } = await runMutation(async () => {
        const existing = (await ctx.gitlab.client.listHooks(projectId, { page: 1, perPage: 100 })).items.find((hook) => hook.url === url);
        // With a signing token, GitLab 19.0+ signs each delivery and the shared X-Gitlab-Token is not sent at all;
        // an older GitLab ignores signing_token (signing_token_present is not true): the hook then keeps the token.
        const signed = signingToken ? { ...params, token: '', signing_token: signingToken } : params;
        let hook = existing ? await ctx.gitlab.client.updateHook(projectId, existing.id, signed) : await ctx.gitlab.client.createHook(projectId, signed);
        if (signingToken && hook.signing_token_present !== true) hook = await ctx.gitlab.client.updateHook(projectId, hook.id, params);
        return hook;
      });
      return { hook: result, errors };
    },
  }),
);
