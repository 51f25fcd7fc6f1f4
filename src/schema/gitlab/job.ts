/**
 * CI jobs: the Job node with every field of GitLab's job record, its
 * pipeline, commit, artifacts and runner, the project's job connections,
 * and the job mutations. A job's global id carries its project id
 * (`gid://duograph/Job/42/1001`) because every job path needs it.
 */
import type { GraphQLResolveInfo } from 'graphql';
import { InputError } from '../../errors.js';
import type { ArtifactRecord, CommitRecord, JobRecord, PipelineRecord, PipelineRefRecord, RunnerRecord } from '../../upstreams/gitlab/records.js';
import { builder } from '../builder.js';
import { UPSTREAM_CALL } from '../cost.js';
import type { Context } from '../context.js';
import { claiming } from '../claims.js';
import { decodeGlobalId, localIdOf, restIdOf, restIdPairOf } from '../global-id.js';
import { resolveConnection, resolveKeysetConnection } from '../pagination.js';
import { fieldsOnNodes } from '../selection.js';
import { runMutation, UserError, type UserErrorShape } from '../user-error.js';
import { downloadPath } from './download-paths.js';
import { Project } from './project.js';
import { knownOrNull } from './project-enums.js';
import { User } from './user.js';

export const JOB_STATUSES = [
  'created',
  'waiting_for_resource',
  'preparing',
  'waiting_for_callback',
  'pending',
  'running',
  'success',
  'failed',
  'canceling',
  'canceled',
  'skipped',
  'manual',
  'scheduled',
  'started',
] as const;

const JOB_STATUS_VALUES = {
  CREATED: { value: 'created', description: 'Created, not yet queued.' },
  WAITING_FOR_RESOURCE: { value: 'waiting_for_resource', description: 'Waiting for a resource group to free up.' },
  PREPARING: { value: 'preparing', description: 'The runner is preparing the environment.' },
  WAITING_FOR_CALLBACK: { value: 'waiting_for_callback', description: 'Waiting for an external callback.' },
  PENDING: { value: 'pending', description: 'Queued, waiting for a runner.' },
  RUNNING: { value: 'running', description: 'Running.' },
  SUCCESS: { value: 'success', description: 'Finished successfully.' },
  FAILED: { value: 'failed', description: 'Finished with a failure.' },
  CANCELING: { value: 'canceling', description: 'Being canceled.' },
  CANCELED: { value: 'canceled', description: 'Canceled.' },
  SKIPPED: { value: 'skipped', description: 'Skipped.' },
  MANUAL: { value: 'manual', description: 'Waiting to be played by hand.' },
  SCHEDULED: { value: 'scheduled', description: 'Scheduled to start later.' },
  STARTED: { value: 'started', description: 'Played and queued: what GitLab 11 answers to a play (current GitLab answers PENDING).' },
  UNKNOWN: {
    value: 'unknown',
    description: 'A status this schema does not know yet (one a newer GitLab added): `statusRaw` holds what GitLab sent.',
  },
} as const;

/** A status as the schema reads it: a known one, UNKNOWN for one GitLab added since, null when none was sent. */
export function readStatus(value: string | null | undefined): (typeof JOB_STATUSES)[number] | 'unknown' | null {
  if (value === null || value === undefined) return null;
  return knownOrNull(JOB_STATUSES, value) ?? 'unknown';
}

export const JobStatus = builder.enumType('JobStatus', {
  description: 'Status of a CI job or pipeline, as GitLab 11 to 18 report it.',
  values: JOB_STATUS_VALUES,
});

/**
 * The statuses GitLab 17/18 accepts as a job list `scope`
 * (CommitStatus::AVAILABLE_STATUSES): STARTED, which only GitLab 11 reported,
 * is refused there with 400, so it is not offered as a filter.
 */
export const JobScope = builder.enumType('JobScope', {
  description: 'A status a job list can be filtered by: every JobStatus but STARTED, which GitLab 17/18 refuses as a scope, and UNKNOWN.',
  values: (({ STARTED: _started, UNKNOWN: _unknown, ...scopes }) => scopes)(JOB_STATUS_VALUES),
});

export const Commit = builder.objectRef<CommitRecord>('Commit').implement({
  description: 'A Git commit.',
  fields: (t) => ({
    sha: t.string({ description: 'Full SHA of the commit.', resolve: (c) => c.id }),
    shortId: t.exposeString('short_id', { description: 'Short SHA of the commit.' }),
    title: t.exposeString('title', { description: 'First line of the commit message.' }),
    message: t.string({ nullable: true, description: 'Full commit message.', resolve: (c) => c.message ?? null }),
    authorName: t.exposeString('author_name', { description: 'Name of the author.' }),
    authorEmail: t.exposeString('author_email', { description: 'Email of the author.' }),
    createdAt: t.field({ type: 'DateTime', description: 'Time the commit was created.', resolve: (c) => c.created_at }),
  }),
});

const JobArtifact = builder.objectRef<ArtifactRecord>('JobArtifact').implement({
  description: 'A file a job produced: its archive, metadata, trace or reports.',
  fields: (t) => ({
    fileType: t.exposeString('file_type', { description: 'Kind of artifact, e.g. `archive`, `metadata`, `trace`, `junit`.' }),
    size: t.field({ type: 'SafeInt', description: 'Size in bytes.', resolve: (a) => a.size }),
    filename: t.exposeString('filename', { description: 'File name.' }),
    fileFormat: t.string({ nullable: true, description: 'Format, e.g. `zip`, `gzip`, `raw`.', resolve: (a) => a.file_format ?? null }),
  }),
});

const JobRunner = builder.objectRef<RunnerRecord>('JobRunner').implement({
  description: 'The runner that ran a job.',
  fields: (t) => ({
    restId: t.field({ type: 'SafeInt', description: 'Numeric id of the runner.', resolve: (r) => r.id }),
    description: t.string({ nullable: true, description: 'Description of the runner.', resolve: (r) => r.description ?? null }),
    name: t.string({ nullable: true, description: 'Name of the runner.', resolve: (r) => r.name ?? null }),
    active: t.boolean({
      nullable: true,
      description: 'Indicates the runner takes jobs.',
      resolve: (r) => r.active ?? (r.paused === undefined ? null : !r.paused),
    }),
    isShared: t.boolean({ nullable: true, description: 'Indicates a shared runner.', resolve: (r) => r.is_shared ?? null }),
    runnerType: t.string({ nullable: true, description: 'Type: `instance_type`, `group_type` or `project_type`.', resolve: (r) => r.runner_type ?? null }),
    online: t.boolean({ nullable: true, description: 'Indicates the runner is online.', resolve: (r) => r.online ?? null }),
    status: t.string({ nullable: true, description: 'Status of the runner, e.g. `online`, `offline`.', resolve: (r) => r.status ?? null }),
  }),
});

/** A pipeline as lists, jobs and actions carry it: its basic fields at least, in full after a read of its own. */
export type PipelineModel = PipelineRefRecord & Partial<PipelineRecord> & { project_id: number };

export const Pipeline = builder.objectRef<PipelineModel>('Pipeline');

builder.node(Pipeline, {
  description: 'A CI pipeline: the jobs run for one commit of a ref.',
  id: { resolve: (p) => `${p.project_id}/${p.id}` },
  loadOne: (id, ctx) => {
    const [projectId, pipelineId] = parsePipelineId(id);
    return ctx.gitlab.loaders.pipeline(projectId, pipelineId);
  },
  fields: (t) => ({
    restId: t.field({ type: 'SafeInt', description: 'Numeric id of the pipeline.', resolve: (p) => p.id }),
    projectId: t.field({ type: 'SafeInt', description: "Numeric id of the pipeline's project.", resolve: (p) => p.project_id }),
    ref: t.exposeString('ref', { description: 'Branch or tag the pipeline ran for.' }),
    sha: t.exposeString('sha', { description: 'Commit SHA the pipeline ran for.' }),
    status: t.field({
      type: JobStatus,
      nullable: true,
      description: 'Status of the pipeline; UNKNOWN for one this schema does not know yet (see statusRaw).',
      resolve: (p) => readStatus(p.status),
    }),
    statusRaw: t.string({ nullable: true, description: 'Status of the pipeline exactly as GitLab sent it.', resolve: (p) => p.status ?? null }),
    webUrl: t.string({ nullable: true, description: "URL of the pipeline's page.", resolve: (p) => p.web_url ?? null }),
    source: t.string({ nullable: true, description: 'What started the pipeline, e.g. `push`.', resolve: (p) => p.source ?? null }),
    createdAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the pipeline was created.', resolve: (p) => p.created_at ?? null }),
    updatedAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the pipeline last changed.', resolve: (p) => p.updated_at ?? null }),
    jobs: t.connection(
      {
        type: Job,
        description: 'Jobs of the pipeline.',
        args: { statuses: t.arg({ type: [JobScope], description: 'Returns only jobs in these statuses.' }) },
        resolve: (p, args, ctx, info) => listJobs(ctx, info, p.project_id, args, p.id),
      },
      JobConnection,
    ),
  }),
});

export const Job = builder.objectRef<JobRecord>('Job');

builder.node(Job, {
  description: 'A CI job of a pipeline.',
  id: { resolve: (j) => `${j.project_id}/${j.id}` },
  loadOne: (id, ctx) => {
    const [projectId, jobId] = parseJobId(id);
    return ctx.gitlab.loaders.job(projectId, jobId);
  },
  fields: (t) => ({
    restId: t.field({ type: 'SafeInt', description: 'Numeric id of the job.', resolve: (j) => j.id }),
    name: t.exposeString('name', { description: 'Name of the job.' }),
    stage: t.exposeString('stage', { description: 'Stage of the job.' }),
    ref: t.exposeString('ref', { description: 'Branch or tag the job ran for.' }),
    status: t.field({
      type: JobStatus,
      nullable: true,
      description: 'Status of the job; UNKNOWN for one this schema does not know yet (see statusRaw).',
      resolve: (j) => readStatus(j.status),
    }),
    statusRaw: t.string({ nullable: true, description: 'Status of the job exactly as GitLab sent it.', resolve: (j) => j.status ?? null }),
    tag: t.exposeBoolean('tag', { description: 'Indicates the ref is a tag.' }),
    allowFailure: t.boolean({
      nullable: true,
      description: 'Indicates the pipeline may succeed although this job fails.',
      resolve: (j) => j.allow_failure ?? null,
    }),
    coverage: t.float({ nullable: true, description: 'Code coverage the job reported, in percent.', resolve: (j) => j.coverage ?? null }),
    createdAt: t.field({ type: 'DateTime', description: 'Time the job was created.', resolve: (j) => j.created_at }),
    startedAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the job started; null until it does.', resolve: (j) => j.started_at ?? null }),
    finishedAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the job finished; null until it does.', resolve: (j) => j.finished_at ?? null }),
    erasedAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the job was erased.', resolve: (j) => j.erased_at ?? null }),
    duration: t.float({ nullable: true, description: 'Run time in seconds.', resolve: (j) => j.duration ?? null }),
    queuedDuration: t.float({ nullable: true, description: 'Time spent queued, in seconds.', resolve: (j) => j.queued_duration ?? null }),
    webUrl: t.string({ nullable: true, description: "URL of the job's page.", resolve: (j) => j.web_url ?? null }),
    failureReason: t.string({ nullable: true, description: 'Why a failed job failed, e.g. `script_failure`.', resolve: (j) => j.failure_reason ?? null }),
    tagList: t.stringList({ description: 'Runner tags the job asks for.', resolve: (j) => j.tag_list ?? [] }),
    archived: t.boolean({ nullable: true, description: 'Indicates the job is archived (no longer retryable).', resolve: (j) => j.archived ?? null }),
    artifactsExpireAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the artifacts expire.', resolve: (j) => j.artifacts_expire_at ?? null }),
    artifacts: t.field({ type: [JobArtifact], description: 'Artifacts of the job.', resolve: (j) => j.artifacts ?? [] }),
    artifactsFile: t.field({
      type: JobArtifact,
      nullable: true,
      description: 'The artifacts archive, as older GitLab reports it.',
      resolve: (j) => (j.artifacts_file ? { file_type: 'archive', file_format: 'zip', ...j.artifacts_file } : null),
    }),
    runner: t.field({ type: JobRunner, nullable: true, description: 'Runner that ran the job.', resolve: (j) => j.runner ?? null }),
    commit: t.field({ type: Commit, nullable: true, description: 'Commit the job ran for.', resolve: (j) => j.commit ?? null }),
    pipeline: t.field({
      type: Pipeline,
      nullable: true,
      description: 'Pipeline the job belongs to.',
      resolve: (j) => (j.pipeline ? { ...j.pipeline, project_id: j.pipeline.project_id ?? j.project_id } : null),
    }),
    user: t.field({ type: User, nullable: true, description: 'User who started the job.', resolve: (j) => j.user ?? null }),
    project: t.field({
      type: Project,
      nullable: true,
      complexity: UPSTREAM_CALL,
      description: 'Project of the job.',
      resolve: (j, _args, ctx) => ctx.gitlab.loaders.project(j.project_id),
    }),
    downloadUrl: t.string({
      nullable: true,
      description: 'Download URL that GitLab 11 sent in erase and keep responses; current GitLab never sends it, so it is null there.',
      deprecationReason: 'GitLab 12+ no longer sends it: use artifactsArchiveUrl, which works on every version.',
      resolve: (j) => j.download_url ?? null,
    }),
    traceUrl: t.string({
      description: "Gateway URL streaming the job's log (send the same credentials).",
      resolve: (j) => downloadPath(['projects', j.project_id, 'jobs', j.id, 'trace']),
    }),
    artifactsArchiveUrl: t.string({
      description: "Gateway URL streaming the job's artifacts archive (send the same credentials).",
      resolve: (j) => downloadPath(['projects', j.project_id, 'jobs', j.id, 'artifacts']),
    }),
    artifactFileUrl: t.string({
      description: 'Gateway URL streaming one file from the artifacts archive.',
      args: { path: t.arg.string({ required: true, description: 'Path of the file inside the archive.' }) },
      resolve: (j, args) => downloadPath(['projects', j.project_id, 'jobs', j.id, 'artifacts'], args.path),
    }),
    trace: t.string({
      complexity: UPSTREAM_CALL,
      nullable: true,
      description: "The job's log as text, for small logs (up to 1 MiB; use traceUrl beyond); null when the job has none.",
      args: { tailLines: t.arg.int({ description: 'Returns only the last n lines.' }) },
      resolve: async (j, args, ctx) => {
        if (args.tailLines !== null && args.tailLines !== undefined && args.tailLines < 0) {
          throw new InputError('"tailLines" must not be negative.', ['tailLines']);
        }
        const text = await ctx.gitlab.client.getTrace(j.project_id, j.id, 1024 * 1024);
        // GitLab answers 200 with no body for a job that never wrote a log: that is "none", as described.
        if (text === null || text === '') return null;
        if (args.tailLines === null || args.tailLines === undefined) return text;
        const lines = text.replace(/\n$/, '').split('\n');
        return args.tailLines === 0 ? '' : lines.slice(-args.tailLines).join('\n');
      },
    }),
  }),
});

export const JobConnection = builder.connectionObject(
  { type: Job, name: 'JobConnection', description: 'A page of jobs, newest first. GitLab does not count job lists: totalCount is null.' },
  { name: 'JobEdge', description: 'A job with its cursor.' },
);

/** The local id of a job or pipeline, "42/1001", as [project, id]; throws InputError for anything else. */
function projectScopedPair(id: string, what: 'job' | 'pipeline'): [number, number] {
  const pair = restIdPairOf(id);
  if (!pair) throw new InputError(`"${id.slice(0, 80)}" is not a ${what} id.`, ['id']);
  return pair;
}

/** A pipeline's local id "42/4100000001" to [42, 4100000001]; throws InputError for anything else. */
export function parsePipelineId(id: string): [number, number] {
  return projectScopedPair(id, 'pipeline');
}

/** "42/1001" to [42, 1001]; throws InputError for anything else. */
export function parseJobId(id: string): [number, number] {
  return projectScopedPair(id, 'job');
}

/**
 * A job or pipeline argument as [project, id]: its global id, or a plain
 * number within `projectId` when one is given. `field` names the argument
 * in errors.
 */
export function projectScopedIdFromArg(id: string, typename: 'Job' | 'Pipeline', projectId?: number, field = 'id'): [number, number] {
  const plain = restIdOf(id);
  if (plain !== null && projectId !== undefined) return [projectId, plain];
  const decoded = decodeGlobalId(id);
  if (decoded.typename !== typename) throw new InputError(`"${id.slice(0, 80)}" is not a ${typename} id.`, [field]);
  return projectScopedPair(decoded.id, typename === 'Job' ? 'job' : 'pipeline');
}

/**
 * The record fields each Job field reads (the id is always kept; the
 * client sets project_id). A selected field missing here keeps whole
 * records, so a field added to Job without an entry costs memory, not data
 * (and fails a test in jobs.test.ts).
 */
export const JOB_RECORD_FIELDS: Readonly<Record<string, readonly (keyof JobRecord)[]>> = {
  __typename: [],
  id: [],
  restId: [],
  project: [],
  traceUrl: [],
  artifactsArchiveUrl: [],
  artifactFileUrl: [],
  trace: [],
  name: ['name'],
  stage: ['stage'],
  ref: ['ref'],
  status: ['status'],
  statusRaw: ['status'],
  tag: ['tag'],
  allowFailure: ['allow_failure'],
  coverage: ['coverage'],
  createdAt: ['created_at'],
  startedAt: ['started_at'],
  finishedAt: ['finished_at'],
  erasedAt: ['erased_at'],
  duration: ['duration'],
  queuedDuration: ['queued_duration'],
  webUrl: ['web_url'],
  failureReason: ['failure_reason'],
  tagList: ['tag_list'],
  archived: ['archived'],
  artifactsExpireAt: ['artifacts_expire_at'],
  artifacts: ['artifacts'],
  artifactsFile: ['artifacts_file'],
  runner: ['runner'],
  commit: ['commit'],
  pipeline: ['pipeline'],
  user: ['user'],
  downloadUrl: ['download_url'],
};

/** The record fields a job connection's selection reads; undefined when it selects a field JOB_RECORD_FIELDS does not know. */
function recordFieldsFor(info: GraphQLResolveInfo): (keyof JobRecord)[] | undefined {
  const kept = new Set<keyof JobRecord>();
  for (const field of fieldsOnNodes(info)) {
    const fields = JOB_RECORD_FIELDS[field];
    if (!fields) return undefined;
    for (const name of fields) kept.add(name);
  }
  return [...kept];
}

/**
 * A page of jobs, each record cut to what the selection reads as the page is
 * parsed (a job record is some 2.4 KB of JSON; a list of 20 jobs' names and
 * statuses reads a tenth of it). So lists do not prime the job loader: a
 * later lookup of a listed job gets every field, at the cost of its call.
 */
function listJobs(
  ctx: Context,
  info: GraphQLResolveInfo,
  projectId: number,
  args: { statuses?: readonly string[] | null; first?: number | null; after?: string | null; last?: number | null; before?: string | null },
  pipelineId?: number,
) {
  const fields = recordFieldsFor(info);
  const scope = args.statuses ?? undefined;
  const byOffset = (page: number, perPage: number) => ctx.gitlab.client.listJobs(projectId, scope, { page, perPage }, pipelineId, fields);
  if (pipelineId !== undefined) return resolveConnection(args, ctx.defaultPageSize, byOffset);
  // A project's jobs are also served by keyset, newest first: a forward walk goes on past GitLab's offset limit.
  return resolveKeysetConnection(
    args,
    ctx.defaultPageSize,
    (job) => job.id,
    (after, limit) => ctx.gitlab.client.listJobs(projectId, scope, { after, limit }, undefined, fields),
    byOffset,
  );
}

/** The job a `Project.job(id:)` or mutation argument names: a Job global id, or a plain number within `projectId`. */
function jobKeyFromArg(id: string, projectId?: number): [number, number] {
  return projectScopedIdFromArg(id, 'Job', projectId);
}

builder.objectFields(Project, (t) => ({
  jobs: t.connection(
    {
      type: Job,
      description: 'CI jobs of the project, newest first; forward pages after the first are read by keyset, at any depth.',
      args: { statuses: t.arg({ type: [JobScope], description: 'Returns only jobs in these statuses.' }) },
      resolve: (p, args, ctx, info) => listJobs(claiming(ctx, p, info), info, p.id, args),
    },
    JobConnection,
  ),
  pipelineJobs: t.connection(
    {
      type: Job,
      description: 'Jobs of one pipeline of the project.',
      args: {
        pipelineId: t.arg({ type: 'SafeInt', required: true, description: 'Numeric id of the pipeline.' }),
        statuses: t.arg({ type: [JobScope], description: 'Returns only jobs in these statuses.' }),
      },
      resolve: (p, args, ctx, info) => listJobs(claiming(ctx, p, info), info, p.id, args, args.pipelineId),
    },
    JobConnection,
  ),
  latestArtifactsArchiveUrl: t.string({
    description: 'Gateway URL streaming the artifacts archive of the latest successful pipeline of a ref, for one job name.',
    args: {
      ref: t.arg.string({ required: true, description: 'Branch or tag name (not HEAD or a SHA).' }),
      job: t.arg.string({ required: true, description: 'Name of the job.' }),
    },
    resolve: (p, args) => downloadPath(['projects', p.id, 'jobs', 'artifacts', args.ref, 'download'], undefined, { job: args.job }),
  }),
  latestArtifactFileUrl: t.string({
    description: 'Gateway URL streaming one file from the artifacts of the latest successful pipeline of a ref, for one job name.',
    args: {
      ref: t.arg.string({ required: true, description: 'Branch or tag name (not HEAD or a SHA).' }),
      job: t.arg.string({ required: true, description: 'Name of the job.' }),
      path: t.arg.string({ required: true, description: 'Path of the file inside the archive.' }),
    },
    resolve: (p, args) => downloadPath(['projects', p.id, 'jobs', 'artifacts', args.ref, 'raw'], args.path, { job: args.job }),
  }),
  snapshotUrl: t.string({
    description: 'Gateway URL streaming an uncompressed tar of the Git repository (admins only).',
    args: { wiki: t.arg.boolean({ description: 'Gives the wiki repository instead.' }) },
    resolve: (p, args) => downloadPath(['projects', p.id, 'snapshot'], undefined, args.wiki ? { wiki: 'true' } : undefined),
  }),
  job: t.field({
    complexity: UPSTREAM_CALL,
    type: Job,
    nullable: true,
    description: 'One job of the project; null when it does not exist.',
    args: { id: t.arg.id({ required: true, description: 'Global id or numeric id of the job.' }) },
    resolve: (p, args, ctx) => {
      const [projectId, jobId] = jobKeyFromArg(String(args.id), p.id);
      return projectId === p.id ? ctx.gitlab.loaders.job(projectId, jobId) : null;
    },
  }),
}));

// --- mutations -----------------------------------------------------------------

interface JobPayloadShape {
  job: JobRecord | null;
  errors: UserErrorShape[];
}

const JobIdInput = (name: string) =>
  builder.inputType(name, {
    description: 'The job to act on.',
    fields: (t) => ({ id: t.id({ required: true, description: 'Global id of the job, e.g. `gid://duograph/Job/42/1001`.' }) }),
  });

const JobPayload = (name: string, jobDescription: string) =>
  builder.objectRef<JobPayloadShape>(`${name}Payload`).implement({
    description: `Result of ${name[0]?.toLowerCase()}${name.slice(1)}.`,
    fields: (t) => ({
      job: t.field({ type: Job, nullable: true, description: jobDescription, resolve: (p) => p.job }),
      errors: t.field({ type: [UserError], nullable: false, description: 'Why the mutation was refused; empty on success.', resolve: (p) => p.errors }),
    }),
  });

const ACTIONS = [
  ['jobCancel', 'cancel', 'Cancels a job.', 'The canceled job.'],
  [
    'jobRetry',
    'retry',
    'Retries a job. Current GitLab creates a new job (with a new id) and returns it.',
    'The new job (current GitLab) or the retried job (GitLab 11).',
  ],
  ['jobPlay', 'play', 'Plays a manual job.', 'The played job: PENDING on current GitLab, STARTED on GitLab 11.'],
  ['jobErase', 'erase', "Erases a job's artifacts and log.", 'The erased job.'],
  ['jobArtifactsKeep', 'keep', "Keeps a job's artifacts from expiring.", 'The job.'],
] as const;

for (const [name, action, description, jobDescription] of ACTIONS) {
  const Name = `${name[0]?.toUpperCase()}${name.slice(1)}`;
  builder.mutationField(name, (t) =>
    t.field({
      type: JobPayload(Name, jobDescription),
      nullable: true,
      description,
      args: { input: t.arg({ type: JobIdInput(`${Name}Input`), required: true, description: 'The job.' }) },
      resolve: async (_root, { input }, ctx) => {
        const [projectId, jobId] = jobKeyFromArg(String(input.id));
        const { result, errors } = await runMutation(() => ctx.gitlab.client.jobAction(projectId, jobId, action));
        return { job: result, errors };
      },
    }),
  );
}

builder.mutationField('jobArtifactsDelete', (t) =>
  t.field({
    type: JobPayload('JobArtifactsDelete', 'The job after its artifacts were deleted.'),
    nullable: true,
    description: "Deletes a job's artifacts (Maintainer role).",
    args: { input: t.arg({ type: JobIdInput('JobArtifactsDeleteInput'), required: true, description: 'The job.' }) },
    resolve: async (_root, { input }, ctx) => {
      const [projectId, jobId] = jobKeyFromArg(String(input.id));
      const { errors } = await runMutation(() => ctx.gitlab.client.deleteJobArtifacts(projectId, jobId));
      return { job: errors.length ? null : await ctx.gitlab.client.getJob(projectId, jobId), errors };
    },
  }),
);

// Federation: a supergraph names a job by its global id (which carries its project); loaded as `node` loads it.
builder.asEntity(Job, {
  key: builder.selection<{ id: string }>('id'),
  resolveReference: (ref, ctx) => {
    const id = localIdOf(ref.id, 'Job');
    const key = id === null ? null : restIdPairOf(id);
    return key ? ctx.gitlab.loaders.job(...key) : null;
  },
});
