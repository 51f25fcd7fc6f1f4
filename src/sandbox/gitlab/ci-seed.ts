/**
 * The seeded CI data, hooks and push rules of the sandbox GitLab; the
 * tables at the top of seed.ts describe them. Finished pipelines have fixed
 * timestamps; the two moving pipelines (104, 105, 202) are placed relative
 * to the clock's start, so they advance one step STEP_MS after it.
 */
import { createHash } from 'node:crypto';
import { STEP_MS } from './clock.js';
import { compositeStatus, SHARED_RUNNER_ID } from './ci-runner.js';
import { artifactsFor, traceEnd, traceStart } from './job-output.js';
import { HOOK_EVENTS, type GitlabStore, type HookEvent, type JobArtifacts, type JobStatus, type SandboxJob, type SandboxPipeline } from './store.js';

/** CI_JOB_TOKEN of running job 1013 (platform/core rspec, run by alice); accepted on artifact downloads. */
export const SEED_JOB_TOKEN = 'sandbox-ci-job-token-1013';
/** The job whose archive is generated on the fly when `largeArtifactBytes` is set. */
export const LARGE_ARTIFACT_JOB_ID = 1007;
/** Path of the generated file inside that archive. */
export const LARGE_ARTIFACT_PATH = 'package/core-1.2.0.bin';

const t = (iso: string): number => Date.parse(iso);
const sha = (seed: string): string => createHash('sha1').update(seed).digest('hex');

interface JobSeed {
  id: number;
  name: string;
  stage: number;
  status: JobStatus;
  outcome?: 'success' | 'failed';
  allowFailure?: boolean;
  when?: SandboxJob['when'];
  failureReason?: string;
  artifacts?: boolean;
  tags?: string[];
  coverage?: number;
}

interface PipelineSeed {
  id: number;
  iid: number;
  projectId: number;
  ref: string;
  tag?: boolean;
  userId: number;
  message: string;
  /** Creation time; for moving pipelines, relative to the clock start. */
  createdAt: number;
  stages: string[];
  jobs: JobSeed[];
}

/** Options of `seedCi`. */
export interface CiSeedOptions {
  /** Size of the generated archive entry of job LARGE_ARTIFACT_JOB_ID; null for its ordinary small archive. */
  largeArtifactBytes: number | null;
}

/** Seeds pipelines and jobs, the job token, hooks and push rules; `now` is the clock's start. */
export function seedCi(store: GitlabStore, now: number, options: CiSeedOptions): void {
  const active = (ms: number): number => now + ms;
  const pipelines: PipelineSeed[] = [
    {
      id: 101,
      iid: 1,
      projectId: 1,
      ref: 'main',
      userId: 3,
      message: 'Add the billing module\n',
      createdAt: t('2024-02-20T10:00:00.000Z'),
      stages: ['build', 'test', 'deploy'],
      jobs: [
        { id: 1001, name: 'build', stage: 0, status: 'success', artifacts: true, tags: ['docker', 'linux'] },
        { id: 1002, name: 'rspec', stage: 1, status: 'success', coverage: 87.5 },
        { id: 1003, name: 'rubocop', stage: 1, status: 'failed', allowFailure: true, failureReason: 'script_failure' },
        { id: 1004, name: 'deploy-staging', stage: 2, status: 'success' },
        { id: 1005, name: 'deploy-production', stage: 2, status: 'manual', when: 'manual', allowFailure: true },
      ],
    },
    {
      id: 102,
      iid: 2,
      projectId: 1,
      ref: 'v1.2.0',
      tag: true,
      userId: 3,
      message: 'Release 1.2.0\n',
      createdAt: t('2024-02-25T09:30:00.000Z'),
      stages: ['build', 'package', 'release'],
      jobs: [
        { id: 1006, name: 'build', stage: 0, status: 'success', artifacts: true },
        { id: 1007, name: 'package', stage: 1, status: 'success', artifacts: true },
        { id: 1008, name: 'release', stage: 2, status: 'success' },
      ],
    },
    {
      id: 103,
      iid: 3,
      projectId: 1,
      ref: 'main',
      userId: 3,
      message: 'Speed up the importer\n',
      createdAt: t('2024-03-01T14:00:00.000Z'),
      stages: ['build', 'test', 'deploy'],
      jobs: [
        { id: 1009, name: 'build', stage: 0, status: 'success', artifacts: true },
        { id: 1010, name: 'rspec', stage: 1, status: 'failed', failureReason: 'script_failure' },
        { id: 1011, name: 'deploy-staging', stage: 2, status: 'skipped' },
      ],
    },
    {
      id: 104,
      iid: 4,
      projectId: 1,
      ref: 'main',
      userId: 3,
      message: 'Fix the flaky importer spec\n',
      createdAt: active(-3 * STEP_MS),
      stages: ['build', 'test', 'deploy'],
      jobs: [
        { id: 1012, name: 'build', stage: 0, status: 'success', artifacts: true },
        { id: 1013, name: 'rspec', stage: 1, status: 'running', outcome: 'success', tags: ['docker'] },
        { id: 1014, name: 'rubocop', stage: 1, status: 'pending', outcome: 'failed', allowFailure: true, failureReason: 'script_failure' },
        { id: 1015, name: 'deploy-staging', stage: 2, status: 'created', outcome: 'success', artifacts: true },
        { id: 1016, name: 'deploy-production', stage: 2, status: 'created', when: 'manual', allowFailure: true },
      ],
    },
    {
      id: 105,
      iid: 5,
      projectId: 1,
      ref: 'feature/login',
      userId: 2,
      message: 'Add the login form\n',
      createdAt: active(-STEP_MS),
      stages: ['test'],
      jobs: [
        { id: 1017, name: 'lint', stage: 0, status: 'preparing', outcome: 'success' },
        { id: 1018, name: 'unit', stage: 0, status: 'waiting_for_resource', outcome: 'success' },
        { id: 1019, name: 'e2e', stage: 0, status: 'scheduled', when: 'delayed', outcome: 'success' },
        { id: 1020, name: 'cleanup', stage: 0, status: 'canceling', outcome: 'success' },
      ],
    },
    {
      id: 201,
      iid: 1,
      projectId: 7,
      ref: 'main',
      userId: 2,
      message: 'Try a canvas demo\n',
      createdAt: t('2023-11-12T11:00:00.000Z'),
      stages: ['test', 'deploy'],
      jobs: [
        { id: 2001, name: 'test', stage: 0, status: 'success' },
        { id: 2002, name: 'pages', stage: 1, status: 'success', artifacts: true },
      ],
    },
    {
      id: 202,
      iid: 2,
      projectId: 7,
      ref: 'main',
      userId: 2,
      message: 'Break the canvas demo\n',
      createdAt: active(-2 * STEP_MS),
      stages: ['test', 'deploy'],
      jobs: [
        { id: 2003, name: 'test', stage: 0, status: 'running', outcome: 'failed', failureReason: 'script_failure' },
        { id: 2004, name: 'pages', stage: 1, status: 'created', outcome: 'success', artifacts: true },
        { id: 2005, name: 'deploy-manual', stage: 1, status: 'created', when: 'manual', allowFailure: true },
      ],
    },
    {
      id: 301,
      iid: 1,
      projectId: 2,
      ref: 'main',
      userId: 4,
      message: 'Plan the network\n',
      createdAt: t('2023-12-05T08:00:00.000Z'),
      stages: ['plan'],
      jobs: [{ id: 3001, name: 'plan', stage: 0, status: 'success', artifacts: true }],
    },
    {
      id: 401,
      iid: 1,
      projectId: 6,
      ref: 'main',
      userId: 2,
      message: 'Bump the base image\n',
      createdAt: t('2024-01-06T10:00:00.000Z'),
      stages: ['build', 'test'],
      jobs: [
        { id: 4001, name: 'docker', stage: 0, status: 'success', artifacts: true },
        { id: 4002, name: 'pytest', stage: 1, status: 'failed', failureReason: 'runner_system_failure' },
      ],
    },
    {
      // gitlab.com's ids are past 2^31 (jobs since 2022): this pipeline's, and every id handed out after it, are too.
      id: 4_100_000_001,
      iid: 1,
      projectId: ADMIN_SCRIPTS_ID,
      ref: 'main',
      userId: 1,
      message: 'Rotate the backups\n',
      createdAt: t('2022-10-02T00:00:00.000Z'),
      stages: ['test'],
      jobs: [
        { id: 4_294_967_296, name: 'shellcheck', stage: 0, status: 'success' },
        { id: 4_294_967_297, name: 'backup-dry-run', stage: 0, status: 'success', artifacts: true },
      ],
    },
  ];

  for (const seed of pipelines) addPipeline(store, seed, now, options);

  store.jobTokens.set(SEED_JOB_TOKEN, { token: SEED_JOB_TOKEN, jobId: 1013 });
  seedHooks(store);
  store.pushRules.set(1, {
    id: 1,
    projectId: 1,
    createdAt: t('2024-01-20T12:00:00.000Z'),
    commitMessageRegex: 'Fixes \\d+\\..*',
    commitMessageNegativeRegex: 'ssh\\:\\/\\/',
    branchNameRegex: '',
    authorEmailRegex: '@sandbox\\.test$',
    fileNameRegex: '',
    denyDeleteTag: false,
    memberCheck: false,
    preventSecrets: true,
    maxFileSize: 5,
    commitCommitterCheck: false,
    commitCommitterNameCheck: false,
    rejectUnsignedCommits: false,
    rejectNonDcoCommits: false,
  });
  store.reserveId('push_rule', 1);
}

/** root/admin-scripts: a project id past 2^32, as gitlab.com's are. */
export const ADMIN_SCRIPTS_ID = 4_000_000_013;

/** First id of the generated bulk pipelines and of their jobs (seedBulkCi). */
export const BULK_PIPELINE_FIRST_ID = 4_200_000_001;
export const BULK_JOB_FIRST_ID = 6_747_393_391;
const BULK_STAGES = ['build', 'test', 'deploy'];

/**
 * Generated finished CI for load tests: for each `[projectId, jobCount, userId]`,
 * pipelines on main of `perPipeline` jobs each (the last one may hold fewer)
 * until the project has `jobCount` more jobs. Jobs cycle through the stages
 * build, test, deploy; every tenth job failed (script_failure), the rest
 * succeeded. Pipeline ids count up from 4,200,000,001 and job ids from 6,747,393,391 (a
 * real gitlab.com job id), in project order.
 */
export function seedBulkCi(
  store: GitlabStore,
  now: number,
  projects: readonly (readonly [projectId: number, jobCount: number, userId: number])[],
  perPipeline: number,
): void {
  let pipelineId = BULK_PIPELINE_FIRST_ID;
  let jobId = BULK_JOB_FIRST_ID;
  const base = t('2022-06-01T00:00:00.000Z');
  for (const [projectId, jobCount, userId] of projects) {
    let iid = 1_000;
    for (let done = 0; done < jobCount; done += perPipeline) {
      const size = Math.min(perPipeline, jobCount - done);
      const jobs: JobSeed[] = Array.from({ length: size }, (_, n) => {
        const id = jobId++;
        const failed = id % 10 === 0;
        return {
          id,
          name: `${BULK_STAGES[n % BULK_STAGES.length] ?? 'test'}-${n + 1}`,
          stage: n % BULK_STAGES.length,
          status: failed ? 'failed' : 'success',
          ...(failed ? { failureReason: 'script_failure' } : {}),
        };
      });
      addPipeline(
        store,
        {
          id: pipelineId,
          iid: iid++,
          projectId,
          ref: 'main',
          userId,
          message: `Bulk pipeline ${pipelineId}\n`,
          createdAt: base + (pipelineId - BULK_PIPELINE_FIRST_ID) * 60_000,
          stages: BULK_STAGES,
          jobs,
        },
        now,
        { largeArtifactBytes: null },
      );
      pipelineId++;
    }
  }
}

/** Stores a pipeline and its jobs, then derives the pipeline's status and times from the jobs. */
function addPipeline(store: GitlabStore, seed: PipelineSeed, now: number, options: CiSeedOptions): void {
  const pipeline: SandboxPipeline = {
    id: seed.id,
    iid: seed.iid,
    projectId: seed.projectId,
    ref: seed.ref,
    tag: seed.tag ?? false,
    sha: sha(`${seed.projectId}-${seed.iid}`),
    beforeSha: sha(`${seed.projectId}-${seed.iid - 1}`),
    source: 'push',
    status: 'created',
    userId: seed.userId,
    createdAt: seed.createdAt,
    updatedAt: seed.createdAt,
    startedAt: seed.createdAt + 5_000,
    finishedAt: null,
    commitMessage: seed.message,
    commitAuthorId: seed.userId,
  };
  store.pipelines.set(pipeline.id, pipeline);
  store.reserveId('pipeline', pipeline.id);
  const finishedPipeline = seed.createdAt < now - 3_600_000;
  for (const jobSeed of seed.jobs) {
    const job = seedJob(pipeline, seed, jobSeed, finishedPipeline, now, options);
    store.jobs.set(job.id, job);
    store.reserveId('job', job.id);
  }
  const jobs = store.pipelineJobs(pipeline.id);
  pipeline.status = compositeStatus(jobs);
  const ends = jobs.map((job) => job.finishedAt ?? 0);
  pipeline.finishedAt = ['success', 'failed', 'canceled', 'skipped'].includes(pipeline.status) ? Math.max(...ends) : null;
  pipeline.updatedAt = Math.max(pipeline.createdAt, ...ends, ...jobs.map((job) => job.startedAt ?? 0));
}

function seedJob(pipeline: SandboxPipeline, seed: PipelineSeed, jobSeed: JobSeed, finishedPipeline: boolean, now: number, options: CiSeedOptions): SandboxJob {
  const { status } = jobSeed;
  // Finished pipelines: each stage ran two minutes after the previous one, each job 90 seconds.
  const base = seed.createdAt + 10_000 + jobSeed.stage * 120_000;
  const ran = ['success', 'failed', 'running', 'canceling'].includes(status);
  const job: SandboxJob = {
    id: jobSeed.id,
    projectId: seed.projectId,
    pipelineId: pipeline.id,
    name: jobSeed.name,
    stage: seed.stages[jobSeed.stage] ?? 'test',
    stageIndex: jobSeed.stage,
    status,
    when: jobSeed.when ?? 'on_success',
    allowFailure: jobSeed.allowFailure ?? false,
    outcome: jobSeed.outcome ?? (status === 'failed' ? 'failed' : 'success'),
    failureReason: jobSeed.failureReason ?? null,
    tagList: jobSeed.tags ?? [],
    coverage: jobSeed.coverage ?? null,
    userId: seed.userId,
    createdAt: seed.createdAt,
    queuedAt: null,
    startedAt: null,
    finishedAt: null,
    erasedAt: null,
    scheduledAt: null,
    dueAt: null,
    runnerId: null,
    trace: null,
    artifacts: null,
    producesArtifacts: jobSeed.artifacts ?? false,
    retried: false,
    retriesCount: 0,
  };
  if (finishedPipeline) {
    if (ran) {
      job.queuedAt = base - 2_000;
      job.startedAt = base;
      job.finishedAt = base + 90_000 + (jobSeed.id % 7) * 1_000;
    }
  } else if (status === 'success' || status === 'failed') {
    job.queuedAt = seed.createdAt;
    job.startedAt = seed.createdAt + 1_000;
    job.finishedAt = now - STEP_MS;
  } else if (status === 'running' || status === 'canceling') {
    job.queuedAt = now - 2 * STEP_MS;
    job.startedAt = now - STEP_MS;
    job.dueAt = now + STEP_MS;
  } else if (status === 'pending' || status === 'preparing' || status === 'waiting_for_resource') {
    job.queuedAt = now - STEP_MS;
    job.dueAt = now + STEP_MS;
  } else if (status === 'scheduled') {
    job.scheduledAt = now + 3 * STEP_MS;
    job.dueAt = job.scheduledAt;
  }
  if (job.startedAt !== null) {
    job.runnerId = SHARED_RUNNER_ID;
    job.trace = traceStart(job);
    if (job.finishedAt !== null) job.trace += traceEnd(job, status === 'failed' ? 'failed' : 'success');
  }
  if (status === 'success' && job.producesArtifacts) {
    job.artifacts = artifactsFor(job, job.finishedAt ?? now);
    if (job.id === 1001) job.artifacts = buildOutput(job.artifacts);
    if (job.id === 1001 || job.id === 1012) job.artifacts.junit = true;
    if (job.id === LARGE_ARTIFACT_JOB_ID && options.largeArtifactBytes !== null) {
      job.artifacts = { ...job.artifacts, entries: [], generatedBytes: options.largeArtifactBytes, generatedPath: LARGE_ARTIFACT_PATH };
    }
  }
  // The tag pipeline's artifacts are kept for good (keep-artifacts pressed); others expire.
  if (pipeline.tag && job.artifacts) job.artifacts.expireAt = null;
  return job;
}

/** Job 1001's archive: a small web build, so single-file downloads have something to pick. */
function buildOutput(artifacts: JobArtifacts): JobArtifacts {
  return {
    ...artifacts,
    entries: [
      { path: 'dist/app.js', content: Buffer.from('console.log("core 1.2.0");\n') },
      { path: 'dist/app.css', content: Buffer.from('body { margin: 0; }\n') },
      { path: 'dist/index.html', content: Buffer.from('<!doctype html><title>Core</title><script src="app.js"></script>\n') },
      { path: 'coverage/summary.json', content: Buffer.from('{"lines":87.5}\n') },
      { path: 'README.txt', content: Buffer.from('Build output of platform/core.\n') },
    ],
  };
}

function hookEvents(on: HookEvent[]): Record<HookEvent, boolean> {
  return Object.fromEntries(HOOK_EVENTS.map((event) => [event, on.includes(event)])) as Record<HookEvent, boolean>;
}

function seedHooks(store: GitlabStore): void {
  store.hooks.set(1, {
    id: 1,
    projectId: 1,
    url: 'https://hooks.sandbox.test/core',
    name: 'Chat notifications',
    description: 'Pushes and merge requests to the team chat.',
    token: 'seeded-hook-secret',
    createdAt: t('2024-01-15T09:00:00.000Z'),
    events: hookEvents(['push_events', 'tag_push_events', 'merge_requests_events']),
    pushEventsBranchFilter: 'main',
    branchFilterStrategy: 'wildcard',
    enableSslVerification: true,
    customWebhookTemplate: null,
    customHeaders: new Map([['X-Chat-Channel', 'seeded-header-secret']]),
    urlVariables: new Map(),
    signingToken: null,
  });
  store.hooks.set(2, {
    id: 2,
    projectId: 7,
    url: 'http://hooks.sandbox.test/playground',
    name: '',
    description: '',
    token: null,
    createdAt: t('2023-11-01T08:00:00.000Z'),
    events: hookEvents(['issues_events', 'wiki_page_events']),
    pushEventsBranchFilter: '',
    branchFilterStrategy: 'all_branches',
    enableSslVerification: false,
    customWebhookTemplate: null,
    customHeaders: new Map(),
    urlVariables: new Map(),
    signingToken: null,
  });
  store.reserveId('hook', 2);
}

/**
 * A new pipeline run created through the API (or the web): `build`, then
 * `test` (with a JUnit report), both created; the caller releases the first
 * stage (CiRunner.progress).
 */
export function addPipelineRun(
  store: GitlabStore,
  run: { projectId: number; ref: string; userId: number; source: string; variables: { key: string; value: string; variableType: string }[] },
  now: number,
): SandboxPipeline {
  const previous = [...store.pipelines.values()].filter((p) => p.projectId === run.projectId);
  const id = store.nextId('pipeline');
  const iid = Math.max(0, ...previous.map((p) => p.iid)) + 1;
  addPipeline(
    store,
    {
      id,
      iid,
      projectId: run.projectId,
      ref: run.ref,
      userId: run.userId,
      message: `Pipeline #${iid} on ${run.ref}\n`,
      createdAt: now,
      stages: ['build', 'test'],
      jobs: [
        { id: store.nextId('job'), name: 'build', stage: 0, status: 'created', outcome: 'success', artifacts: true },
        { id: store.nextId('job'), name: 'test', stage: 1, status: 'created', outcome: 'success' },
      ],
    },
    now,
    { largeArtifactBytes: null },
  );
  const pipeline = store.pipelines.get(id) as SandboxPipeline;
  pipeline.source = run.source;
  pipeline.variables = run.variables;
  return pipeline;
}

/** The job GraphiQL's log tab follows: with `demoPipelineEveryMs` it runs for DEMO_LOG_RUN_MS, so the tab shows a log arriving. */
export const DEMO_LOG_JOB_ID = 1013;
/** How long DEMO_LOG_JOB_ID runs in the demo: its log grows a line every TRACE_LINE_MS meanwhile. */
export const DEMO_LOG_RUN_MS = 20 * 60_000;

/** demo/playground, whose pipeline `demoPipelineEveryMs` runs again and again. */
export const DEMO_PIPELINE_PROJECT_ID = 7;

/**
 * A new run of demo/playground's pipeline on main, run by demo: `test`, then
 * `pages` (with an archive), both created and about to move on the clock.
 * Returns its id; the caller releases its first stage (CiRunner.progress).
 */
export function addDemoPipeline(store: GitlabStore, now: number): number {
  const previous = [...store.pipelines.values()].filter((p) => p.projectId === DEMO_PIPELINE_PROJECT_ID);
  const id = store.nextId('pipeline');
  const iid = Math.max(0, ...previous.map((p) => p.iid)) + 1;
  addPipeline(
    store,
    {
      id,
      iid,
      projectId: DEMO_PIPELINE_PROJECT_ID,
      ref: 'main',
      userId: 2,
      message: `Run the canvas demo again (#${iid})\n`,
      createdAt: now,
      stages: ['test', 'deploy'],
      jobs: [
        { id: store.nextId('job'), name: 'test', stage: 0, status: 'created', outcome: 'success' },
        { id: store.nextId('job'), name: 'pages', stage: 1, status: 'created', outcome: 'success', artifacts: true },
      ],
    },
    now,
    { largeArtifactBytes: null },
  );
  return id;
}
