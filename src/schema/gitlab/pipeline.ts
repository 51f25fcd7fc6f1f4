import type { BridgeRecord, PipelineVariableRecord, TestReportSummaryRecord } from '../../upstreams/gitlab/records.js';
import { builder } from '../builder.js';
import type { Context } from '../context.js';
import { UPSTREAM_CALL } from '../cost.js';
import { resolveConnection } from '../pagination.js';
import { UserError, inputError, runMutation, type UserErrorShape } from '../user-error.js';
import { Commit, JobScope, Pipeline, type PipelineModel, projectScopedIdFromArg } from './job.js';
import { Project, projectIdFromArg } from './project.js';
import { SortDirection } from './project-enums.js';
import { User } from './user.js';

/** The pipeline with every field of GitLab's single-pipeline read: itself when it has them, else one call (per pipeline, per request). */
/** The pipeline with `key`: as it is when it holds it, else read whole (a list leaves out most fields, an action's answer `name`). */
async function full(p: PipelineModel, ctx: Context, key: keyof PipelineModel): Promise<PipelineModel> {
  if (key in p) return p;
  return (await ctx.gitlab.loaders.pipeline(p.project_id, p.id)) ?? p;
}

/** GitLab's `base` errors of a pipeline creation that are about the ref asked for (Gitlab::Ci::Pipeline::Chain). */
const ABOUT_THE_REF = /^(Reference not found|Ref is ambiguous|Missing CI config file|Ref does not exist)/i;

const PipelineScope = builder.enumType('PipelineScope', {
  description: 'A group of pipelines GitLab can list (`scope`).',
  values: {
    RUNNING: { value: 'running', description: 'Running pipelines.' },
    PENDING: { value: 'pending', description: 'Pending pipelines.' },
    FINISHED: { value: 'finished', description: 'Finished pipelines: succeeded, failed, canceled or skipped.' },
    BRANCHES: { value: 'branches', description: 'The latest pipeline of each branch.' },
    TAGS: { value: 'tags', description: 'The latest pipeline of each tag.' },
  } as const,
});

const PipelineSource = builder.enumType('PipelineSource', {
  description: 'What started a pipeline (`Ci::Pipeline.sources`).',
  values: {
    PUSH: { value: 'push', description: 'A push.' },
    WEB: { value: 'web', description: 'The web UI.' },
    TRIGGER: { value: 'trigger', description: 'A trigger token.' },
    SCHEDULE: { value: 'schedule', description: 'A pipeline schedule.' },
    API: { value: 'api', description: 'The REST API.' },
    EXTERNAL: { value: 'external', description: 'An external CI service.' },
    PIPELINE: { value: 'pipeline', description: 'Another project’s pipeline (multi-project).' },
    CHAT: { value: 'chat', description: 'ChatOps.' },
    WEBIDE: { value: 'webide', description: 'The Web IDE.' },
    MERGE_REQUEST_EVENT: { value: 'merge_request_event', description: 'A merge request.' },
    EXTERNAL_PULL_REQUEST_EVENT: { value: 'external_pull_request_event', description: 'A pull request of an external repository.' },
    PARENT_PIPELINE: { value: 'parent_pipeline', description: 'A parent pipeline (child pipelines).' },
    ONDEMAND_DAST_SCAN: { value: 'ondemand_dast_scan', description: 'An on-demand DAST scan.' },
    ONDEMAND_DAST_VALIDATION: { value: 'ondemand_dast_validation', description: 'An on-demand DAST site validation.' },
    SECURITY_ORCHESTRATION_POLICY: { value: 'security_orchestration_policy', description: 'A security policy.' },
    CONTAINER_REGISTRY_PUSH: { value: 'container_registry_push', description: 'A push to the container registry.' },
    DUO_WORKFLOW: { value: 'duo_workflow', description: 'A GitLab Duo workflow.' },
    PIPELINE_EXECUTION_POLICY_SCHEDULE: { value: 'pipeline_execution_policy_schedule', description: 'A scheduled pipeline execution policy.' },
    UNKNOWN: { value: 'unknown', description: 'A source GitLab did not record (`unknown`).' },
  } as const,
});

const PipelineOrderBy = builder.enumType('PipelineOrderBy', {
  description: 'What a pipeline list is ordered by (`order_by`); ties go by id.',
  values: {
    ID: { value: 'id', description: 'The id: newest last ascending, first descending.' },
    STATUS: { value: 'status', description: 'The status, alphabetically.' },
    REF: { value: 'ref', description: 'The ref, alphabetically.' },
    UPDATED_AT: { value: 'updated_at', description: 'The time of the last change.' },
    USER_ID: { value: 'user_id', description: 'The id of the user who started it.' },
  } as const,
});

const PipelineDetailedStatus = builder.objectRef<NonNullable<PipelineModel['detailed_status']>>('PipelineDetailedStatus').implement({
  description: 'How GitLab shows the status of a pipeline.',
  fields: (t) => ({
    group: t.string({ nullable: true, description: 'Status group, e.g. `success`, `running`, `failed`.', resolve: (s) => s.group ?? null }),
    text: t.string({ nullable: true, description: 'Short text, e.g. `passed`.', resolve: (s) => s.text ?? null }),
    label: t.string({ nullable: true, description: 'Longer label, e.g. `passed with warnings`.', resolve: (s) => s.label ?? null }),
    icon: t.string({ nullable: true, description: 'Name of the icon, e.g. `status_success`.', resolve: (s) => s.icon ?? null }),
    detailsPath: t.string({ nullable: true, description: "Path of the pipeline's page on GitLab.", resolve: (s) => s.details_path ?? null }),
  }),
});

const PipelineVariable = builder.objectRef<PipelineVariableRecord>('PipelineVariable').implement({
  description: 'A variable a pipeline was created with.',
  fields: (t) => ({
    key: t.string({ description: 'Name of the variable.', resolve: (v) => v.key }),
    value: t.string({ nullable: true, description: 'Value of the variable; null when GitLab hides it.', resolve: (v) => v.value ?? null }),
    variableType: t.string({ nullable: true, description: 'Type: `env_var` or `file`.', resolve: (v) => v.variable_type ?? null }),
    raw: t.boolean({ nullable: true, description: 'Indicates the value is not expanded.', resolve: (v) => v.raw ?? null }),
  }),
});

type Suite = TestReportSummaryRecord['test_suites'][number];

const TestSuiteSummary = builder.objectRef<Suite>('TestSuiteSummary').implement({
  description: 'The totals of one test suite of a pipeline (its JUnit reports, by job name).',
  fields: (t) => ({
    name: t.string({ description: 'Name of the suite (the job that reported it).', resolve: (s) => s.name }),
    time: t.float({ description: 'Run time of the suite, in seconds.', resolve: (s) => s.total_time }),
    count: t.int({ description: 'Number of tests.', resolve: (s) => s.total_count }),
    success: t.int({ description: 'Tests that passed.', resolve: (s) => s.success_count }),
    failed: t.int({ description: 'Tests that failed.', resolve: (s) => s.failed_count }),
    skipped: t.int({ description: 'Tests skipped.', resolve: (s) => s.skipped_count }),
    error: t.int({ description: 'Tests that errored.', resolve: (s) => s.error_count }),
    jobRestIds: t.field({ type: ['SafeInt'], description: 'Numeric ids of the jobs that reported the suite.', resolve: (s) => s.build_ids ?? [] }),
    suiteError: t.string({ nullable: true, description: 'Why the suite could not be parsed, where it could not.', resolve: (s) => s.suite_error ?? null }),
  }),
});

const TestReportSummary = builder.objectRef<TestReportSummaryRecord>('TestReportSummary').implement({
  description: "The totals of a pipeline's test reports.",
  fields: (t) => ({
    time: t.float({ description: 'Run time of all suites, in seconds.', resolve: (r) => r.total.time }),
    count: t.int({ description: 'Number of tests.', resolve: (r) => r.total.count }),
    success: t.int({ description: 'Tests that passed.', resolve: (r) => r.total.success }),
    failed: t.int({ description: 'Tests that failed.', resolve: (r) => r.total.failed }),
    skipped: t.int({ description: 'Tests skipped.', resolve: (r) => r.total.skipped }),
    error: t.int({ description: 'Tests that errored.', resolve: (r) => r.total.error }),
    suites: t.field({ type: [TestSuiteSummary], description: 'Totals per suite.', resolve: (r) => r.test_suites }),
  }),
});

interface BridgeModel {
  record: BridgeRecord;
  projectId: number;
}

const Bridge = builder.objectRef<BridgeModel>('PipelineBridge').implement({
  description: 'A job of a pipeline that triggers a downstream pipeline (a bridge).',
  fields: (t) => ({
    restId: t.field({ type: 'SafeInt', description: 'Numeric id of the bridge job.', resolve: (b) => b.record.id }),
    name: t.string({ description: 'Name of the job.', resolve: (b) => b.record.name }),
    stage: t.string({ description: 'Stage of the job.', resolve: (b) => b.record.stage }),
    status: t.string({ description: 'Status of the job, as GitLab names it.', resolve: (b) => b.record.status }),
    webUrl: t.string({ nullable: true, description: "URL of the job's page.", resolve: (b) => b.record.web_url ?? null }),
    createdAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the job was created.', resolve: (b) => b.record.created_at ?? null }),
    downstreamPipeline: t.field({
      type: Pipeline,
      nullable: true,
      description: 'The pipeline it triggered; null until it has.',
      resolve: (b) =>
        b.record.downstream_pipeline ? { ...b.record.downstream_pipeline, project_id: b.record.downstream_pipeline.project_id ?? b.projectId } : null,
    }),
  }),
});

const BridgeConnection = builder.connectionObject(
  { type: Bridge, name: 'PipelineBridgeConnection', description: 'A page of bridge jobs.' },
  { name: 'PipelineBridgeEdge', description: 'A bridge job with its cursor.' },
);

export const PipelineConnection = builder.connectionObject(
  { type: Pipeline, name: 'PipelineConnection', description: 'A page of pipelines.' },
  { name: 'PipelineEdge', description: 'A pipeline with its cursor.' },
);

builder.objectFields(Pipeline, (t) => {
  const fromFull = <K extends keyof PipelineModel>(key: K) => ({
    complexity: UPSTREAM_CALL,
    resolve: async (p: PipelineModel, _args: unknown, ctx: Context) => ((await full(p, ctx, key))[key] ?? null) as NonNullable<PipelineModel[K]> | null,
  });
  return {
    iid: t.field({ type: 'SafeInt', nullable: true, description: 'Number of the pipeline within its project.', resolve: (p) => p.iid ?? null }),
    name: t.string({ nullable: true, description: 'Name of the pipeline (workflow:name), where it has one.', ...fromFull('name') }),
    beforeSha: t.string({ nullable: true, description: 'SHA of the commit before the pushed ones.', ...fromFull('before_sha') }),
    tag: t.boolean({ nullable: true, description: 'Indicates the ref is a tag.', ...fromFull('tag') }),
    yamlErrors: t.string({ nullable: true, description: 'Errors in the CI configuration; null when it is valid.', ...fromFull('yaml_errors') }),
    user: t.field({ type: User, nullable: true, description: 'User who started the pipeline.', ...fromFull('user') }),
    startedAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the pipeline started.', ...fromFull('started_at') }),
    finishedAt: t.field({ type: 'DateTime', nullable: true, description: 'Time the pipeline finished.', ...fromFull('finished_at') }),
    committedAt: t.field({ type: 'DateTime', nullable: true, description: 'Time of the head commit.', ...fromFull('committed_at') }),
    duration: t.float({ nullable: true, description: 'Run time in seconds.', ...fromFull('duration') }),
    queuedDuration: t.float({ nullable: true, description: 'Time spent queued, in seconds.', ...fromFull('queued_duration') }),
    coverage: t.float({
      nullable: true,
      complexity: UPSTREAM_CALL,
      description: 'Average code coverage of its jobs, in percent.',
      resolve: async (p, _args, ctx) => {
        const value = (await full(p, ctx, 'coverage')).coverage;
        return value === null || value === undefined || value === '' ? null : Number(value);
      },
    }),
    detailedStatus: t.field({
      type: PipelineDetailedStatus,
      nullable: true,
      description: 'How GitLab shows the status.',
      ...fromFull('detailed_status'),
    }),
    variables: t.field({
      type: [PipelineVariable],
      complexity: UPSTREAM_CALL,
      description: 'Variables the pipeline was created with (Maintainers, or Developers for their own pipelines).',
      resolve: (p, _args, ctx) => ctx.gitlab.client.listPipelineVariables(p.project_id, p.id),
    }),
    testReportSummary: t.field({
      type: TestReportSummary,
      complexity: UPSTREAM_CALL,
      description: "The totals of the pipeline's test reports.",
      resolve: (p, _args, ctx) => ctx.gitlab.client.getTestReportSummary(p.project_id, p.id),
    }),
    commit: t.field({
      type: Commit,
      nullable: true,
      complexity: UPSTREAM_CALL,
      description: 'The head commit the pipeline ran for.',
      resolve: (p, _args, ctx) => ctx.gitlab.loaders.commit(p.project_id, p.sha),
    }),
    project: t.field({
      type: Project,
      nullable: true,
      complexity: UPSTREAM_CALL,
      description: 'Project of the pipeline.',
      resolve: (p, _args, ctx) => ctx.gitlab.loaders.project(p.project_id),
    }),
    bridges: t.connection(
      {
        type: Bridge,
        description:
          "Jobs of the pipeline that trigger downstream pipelines: GitLab 19.2's trigger_jobs, or the bridges of an older GitLab (one more call, once per gateway process, to find out which).",
        args: { statuses: t.arg({ type: [JobScope], description: 'Returns only bridges in these statuses.' }) },
        resolve: (p, args, ctx) =>
          resolveConnection(args, ctx.defaultPageSize, async (page, perPage) => {
            const result = await ctx.gitlab.client.listPipelineBridges(p.project_id, p.id, args.statuses ?? undefined, { page, perPage });
            return { ...result, items: result.items.map((record) => ({ record, projectId: p.project_id })) };
          }),
      },
      BridgeConnection,
    ),
  };
});

function hubTime(value: Date | null | undefined): string | undefined {
  return value ? value.toISOString() : undefined;
}

builder.objectFields(Project, (t) => ({
  pipelines: t.connection(
    {
      type: Pipeline,
      description: "CI pipelines of the project, newest first unless ordered otherwise (GitLab's pipelines API).",
      args: {
        scope: t.arg({ type: PipelineScope, description: 'Only this group of pipelines.' }),
        status: t.arg({ type: JobScope, description: 'Only pipelines in this status.' }),
        source: t.arg({ type: PipelineSource, description: 'Only pipelines started this way.' }),
        ref: t.arg.string({ description: 'Only pipelines of this branch or tag.' }),
        sha: t.arg.string({ description: 'Only pipelines of this commit SHA.' }),
        yamlErrors: t.arg.boolean({ description: 'Only pipelines whose CI configuration is invalid (true).' }),
        username: t.arg.string({ description: 'Only pipelines started by this user.' }),
        name: t.arg.string({ description: 'Only pipelines of this name.' }),
        updatedAfter: t.arg({ type: 'DateTime', description: 'Only pipelines changed after this time.' }),
        updatedBefore: t.arg({ type: 'DateTime', description: 'Only pipelines changed before this time.' }),
        createdAfter: t.arg({ type: 'DateTime', description: 'Only pipelines created after this time.' }),
        createdBefore: t.arg({ type: 'DateTime', description: 'Only pipelines created before this time.' }),
        orderBy: t.arg({ type: PipelineOrderBy, description: 'What to order by; the id when left out.' }),
        sort: t.arg({ type: SortDirection, description: 'Direction of the order; descending when left out.' }),
      },
      resolve: (p, args, ctx) => {
        const filters = {
          scope: args.scope ?? undefined,
          status: args.status ?? undefined,
          source: args.source ?? undefined,
          ref: args.ref ?? undefined,
          sha: args.sha ?? undefined,
          yaml_errors: args.yamlErrors ?? undefined,
          username: args.username ?? undefined,
          name: args.name ?? undefined,
          updated_after: hubTime(args.updatedAfter),
          updated_before: hubTime(args.updatedBefore),
          created_after: hubTime(args.createdAfter),
          created_before: hubTime(args.createdBefore),
          order_by: args.orderBy ?? undefined,
          sort: args.sort ?? undefined,
        };
        return resolveConnection(args, ctx.defaultPageSize, (page, perPage) => ctx.gitlab.client.listPipelines(p.id, filters, { page, perPage }));
      },
    },
    PipelineConnection,
  ),
  pipeline: t.field({
    complexity: UPSTREAM_CALL,
    type: Pipeline,
    nullable: true,
    description: 'One pipeline of the project; null when it does not exist.',
    args: { id: t.arg.id({ required: true, description: 'Global id or numeric id of the pipeline.' }) },
    resolve: (p, args, ctx) => {
      const [projectId, pipelineId] = projectScopedIdFromArg(String(args.id), 'Pipeline', p.id);
      return projectId === p.id ? ctx.gitlab.loaders.pipeline(projectId, pipelineId) : null;
    },
  }),
}));

// --- mutations -----------------------------------------------------------------

interface PipelinePayloadShape {
  pipeline: PipelineModel | null;
  errors: UserErrorShape[];
}

const PipelinePayload = (name: string, pipelineDescription: string) =>
  builder.objectRef<PipelinePayloadShape>(`${name}Payload`).implement({
    description: `Result of ${name[0]?.toLowerCase()}${name.slice(1)}.`,
    fields: (t) => ({
      pipeline: t.field({ type: Pipeline, nullable: true, description: pipelineDescription, resolve: (p) => p.pipeline }),
      errors: t.field({ type: [UserError], nullable: false, description: 'Why the mutation was refused; empty on success.', resolve: (p) => p.errors }),
    }),
  });

const PipelineVariableInput = builder.inputType('PipelineVariableInput', {
  description: 'A variable for a new pipeline.',
  fields: (t) => ({
    key: t.string({ required: true, description: 'Name of the variable: letters, digits and `_`.' }),
    value: t.string({ required: true, description: 'Value of the variable.' }),
    variableType: t.string({ defaultValue: 'env_var', description: '`env_var` (the default) or `file`.' }),
  }),
});

const PipelineCreateInput = builder.inputType('PipelineCreateInput', {
  description: 'A new pipeline.',
  fields: (t) => ({
    projectId: t.id({ required: true, description: 'Global id, numeric id or full path of the project.' }),
    ref: t.string({ required: true, description: 'Branch or tag to run the pipeline for.' }),
    variables: t.field({ type: [PipelineVariableInput], description: 'Variables for the pipeline.' }),
  }),
});

builder.mutationField('pipelineCreate', (t) =>
  t.field({
    type: PipelinePayload('PipelineCreate', 'The new pipeline, its first stage already queued.'),
    nullable: true,
    description: 'Starts a pipeline for a branch or tag (Developer). An unknown ref is a user error on `input.ref`.',
    args: { input: t.arg({ type: PipelineCreateInput, required: true, description: 'The pipeline.' }) },
    resolve: async (_root, { input }, ctx) => {
      const projectId = projectIdFromArg(String(input.projectId), 'projectId');
      const errors: UserErrorShape[] = [];
      if (input.ref.trim() === '') errors.push(inputError('ref', 'ref must not be empty.', 'MISSING'));
      for (const variable of input.variables ?? []) {
        if (!/^[A-Za-z0-9_]{1,255}$/.test(variable.key))
          errors.push(inputError('variables', `"${variable.key.slice(0, 80)}" is not a variable name: use letters, digits and _.`));
        if (variable.variableType !== 'env_var' && variable.variableType !== 'file')
          errors.push(inputError('variables', 'variableType is `env_var` or `file`.'));
      }
      if (errors.length > 0) return { pipeline: null, errors };
      const variables = (input.variables ?? []).map((v) => ({ key: v.key, value: v.value, variable_type: v.variableType ?? 'env_var' }));
      const { result, errors: refused } = await runMutation(() => ctx.gitlab.client.createPipeline(projectId, input.ref, variables));
      if (result) ctx.gitlab.loaders.primePipeline(result);
      // GitLab reports everything on `base`; "Reference not found" (and a ref without CI configuration) is about the ref,
      // the rest ("Insufficient permissions to set pipeline variables", rules that add no job) about no one field.
      return { pipeline: result, errors: refused.map((e) => (e.field.length === 0 && ABOUT_THE_REF.test(e.message) ? { ...e, field: ['input', 'ref'] } : e)) };
    },
  }),
);

const PipelineIdInput = (name: string) =>
  builder.inputType(name, {
    description: 'The pipeline to act on.',
    fields: (t) => ({ id: t.id({ required: true, description: 'Global id of the pipeline, e.g. `gid://duograph/Pipeline/42/4100000001`.' }) }),
  });

const ACTIONS = [
  ['pipelineRetry', 'retry', 'Retries the failed and canceled jobs of a pipeline (Developer).', 'The pipeline, its retried jobs queued again.'],
  ['pipelineCancel', 'cancel', 'Cancels the jobs of a pipeline that can still be canceled (Developer).', 'The pipeline after the cancel.'],
] as const;

for (const [name, action, description, pipelineDescription] of ACTIONS) {
  const Name = `${name[0]?.toUpperCase()}${name.slice(1)}`;
  builder.mutationField(name, (t) =>
    t.field({
      type: PipelinePayload(Name, pipelineDescription),
      nullable: true,
      description,
      args: { input: t.arg({ type: PipelineIdInput(`${Name}Input`), required: true, description: 'The pipeline.' }) },
      resolve: async (_root, { input }, ctx) => {
        const [projectId, pipelineId] = projectScopedIdFromArg(String(input.id), 'Pipeline');
        const { result, errors } = await runMutation(() => ctx.gitlab.client.pipelineAction(projectId, pipelineId, action));
        if (result) ctx.gitlab.loaders.primePipeline(result);
        return { pipeline: result, errors };
      },
    }),
  );
}

builder.mutationField('pipelineDelete', (t) =>
  t.field({
    type: PipelinePayload('PipelineDelete', 'Always null: the pipeline is gone.'),
    nullable: true,
    description: 'Deletes a pipeline and its jobs (project Owner).',
    args: { input: t.arg({ type: PipelineIdInput('PipelineDeleteInput'), required: true, description: 'The pipeline.' }) },
    resolve: async (_root, { input }, ctx) => {
      const [projectId, pipelineId] = projectScopedIdFromArg(String(input.id), 'Pipeline');
      const { errors } = await runMutation(() => ctx.gitlab.client.deletePipeline(projectId, pipelineId));
      return { pipeline: null, errors };
    },
  }),
);
