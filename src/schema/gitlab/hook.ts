/**
 * Project webhooks: the ProjectHook node, Project.hooks / Project.hook, and
 * their mutations. The secret token is write-only: accepted in inputs,
 * never a field, never logged. GitLab 11 names the wiki toggle
 * `wiki_page_events` on add and `wiki_events` on edit; the gateway sends
 * what each needs, so callers only ever see `wikiPageEvents`.
 */
import { InputError } from '../../errors.js';
import type { HookRecord } from '../../upstreams/gitlab/records.js';
import { builder } from '../builder.js';
import { UPSTREAM_CALL } from '../cost.js';
import { checked, wrongType } from '../upstream-values.js';
import { knownOrNull } from './project-enums.js';
import { decodeGlobalId, restIdOf, restIdPairOf } from '../global-id.js';
import { resolveConnection } from '../pagination.js';
import { inputError, runMutation, UserError, type UserErrorShape } from '../user-error.js';
import { Project, projectIdFromArg } from './project.js';

export const ProjectHook = builder.objectRef<HookRecord>('ProjectHook');

const TOGGLES = [
  ['push_events', 'pushEvents', 'Indicates pushes trigger the hook.'],
  ['issues_events', 'issuesEvents', 'Indicates issue events trigger the hook.'],
  ['confidential_issues_events', 'confidentialIssuesEvents', 'Indicates confidential issue events trigger the hook.'],
  ['merge_requests_events', 'mergeRequestsEvents', 'Indicates merge request events trigger the hook.'],
  ['tag_push_events', 'tagPushEvents', 'Indicates tag pushes trigger the hook.'],
  ['note_events', 'noteEvents', 'Indicates comments trigger the hook.'],
  ['job_events', 'jobEvents', 'Indicates job status changes trigger the hook.'],
  ['pipeline_events', 'pipelineEvents', 'Indicates pipeline status changes trigger the hook.'],
  ['wiki_page_events', 'wikiPageEvents', 'Indicates wiki page events trigger the hook.'],
  ['confidential_note_events', 'confidentialNoteEvents', 'Indicates comments on confidential issues trigger the hook.'],
  ['deployment_events', 'deploymentEvents', 'Indicates deployments trigger the hook.'],
  ['releases_events', 'releasesEvents', 'Indicates releases trigger the hook.'],
  ['feature_flag_events', 'featureFlagEvents', 'Indicates feature flag changes trigger the hook.'],
  ['milestone_events', 'milestoneEvents', 'Indicates milestone events trigger the hook (GitLab 17+).'],
  ['emoji_events', 'emojiEvents', 'Indicates emoji reactions trigger the hook (GitLab 16+).'],
  ['resource_access_token_events', 'resourceAccessTokenEvents', 'Indicates project access tokens about to expire trigger the hook (GitLab 16+).'],
  ['repository_update_events', 'repositoryUpdateEvents', 'Indicates repository updates trigger the hook.'],
] as const;

const BranchFilterStrategy = builder.enumType('BranchFilterStrategy', {
  description: 'How `pushEventsBranchFilter` is read.',
  values: {
    WILDCARD: { value: 'wildcard', description: 'A wildcard pattern, e.g. `release/*`.' },
    REGEX: { value: 'regex', description: 'A regular expression.' },
    ALL_BRANCHES: { value: 'all_branches', description: 'Every branch; the filter is not used.' },
  } as const,
});

const HookKeyValue = builder.inputType('HookKeyValueInput', {
  description: 'A name and its secret value: a custom header or a URL variable of a hook.',
  fields: (f) => ({
    key: f.string({ required: true, description: 'Name of the header or URL variable.' }),
    value: f.string({ required: true, description: 'Its value. Write-only: GitLab never returns it, and it is never logged.' }),
  }),
});

/** The keys of GitLab's masked `[{ key }]` lists. */
function keysOf(list: unknown): string[] | null {
  const items = checked(list, 'array');
  if (!items) return null;
  return items.map((item) => {
    const key = checked(item, 'object')?.key;
    if (typeof key !== 'string') throw wrongType();
    return key;
  });
}

function parseHookId(id: string): [number, number] {
  const pair = restIdPairOf(id);
  if (!pair) throw new InputError(`"${id.slice(0, 80)}" is not a hook id.`, ['id']);
  return pair;
}

/** A hook named by its global id, or by a numeric id within `projectId`. */
function hookKeyFromArg(id: string, projectId?: number): [number, number] {
  const hookId = restIdOf(id);
  if (hookId !== null && projectId !== undefined) return [projectId, hookId];
  const decoded = decodeGlobalId(id);
  if (decoded.typename !== 'ProjectHook') throw new InputError(`"${id.slice(0, 80)}" is not a ProjectHook id.`, ['id']);
  return parseHookId(decoded.id);
}

builder.node(ProjectHook, {
  description: 'A webhook of a project: GitLab posts the toggled events to its URL. Its secret token is never shown.',
  id: { resolve: (h) => `${h.project_id}/${h.id}` },
  loadOne: (id, ctx) => {
    const [projectId, hookId] = parseHookId(id);
    return ctx.gitlab.client.getHook(projectId, hookId);
  },
  fields: (t) => ({
    restId: t.field({ type: 'SafeInt', description: 'Numeric id of the hook.', resolve: (h) => h.id }),
    projectId: t.field({ type: 'SafeInt', description: "Numeric id of the hook's project.", resolve: (h) => h.project_id }),
    url: t.exposeString('url', { description: 'URL events are posted to.' }),
    name: t.string({ nullable: true, description: 'Name of the hook (current GitLab).', resolve: (h) => h.name ?? null }),
    description: t.string({ nullable: true, description: 'Description of the hook (current GitLab).', resolve: (h) => h.description ?? null }),
    createdAt: t.field({ type: 'DateTime', description: 'Time the hook was created.', resolve: (h) => h.created_at }),
    pushEventsBranchFilter: t.string({
      nullable: true,
      description: 'Branches whose pushes trigger the hook, read as `branchFilterStrategy` says (GitLab 11 to 15: always a wildcard pattern).',
      resolve: (h) => h.push_events_branch_filter ?? null,
    }),
    branchFilterStrategy: t.field({
      type: BranchFilterStrategy,
      nullable: true,
      description: 'How `pushEventsBranchFilter` is read (GitLab 16+); null from older GitLab, which reads it as a wildcard.',
      resolve: (h) => knownOrNull(['wildcard', 'regex', 'all_branches'] as const, checked(h.branch_filter_strategy, 'string')),
    }),
    customHeaderKeys: t.stringList({
      nullable: true,
      description: 'Names of the custom headers sent with each delivery (GitLab 17+). Their values are secrets GitLab never returns.',
      resolve: (h) => keysOf(h.custom_headers),
    }),
    urlVariableKeys: t.stringList({
      nullable: true,
      description: 'Names of the URL variables interpolated into `url` (GitLab 16+). Their values are secrets GitLab never returns.',
      resolve: (h) => keysOf(h.url_variables),
    }),
    enableSslVerification: t.boolean({
      nullable: true,
      description: "Indicates the receiver's TLS certificate is verified.",
      resolve: (h) => h.enable_ssl_verification ?? null,
    }),
    alertStatus: t.string({
      nullable: true,
      description: 'Delivery health (current GitLab): `executable`, `temporarily_disabled` or `disabled`.',
      resolve: (h) => h.alert_status ?? null,
    }),
    disabledUntil: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'Time a temporarily disabled hook is enabled again.',
      resolve: (h) => h.disabled_until ?? null,
    }),
    ...Object.fromEntries(
      TOGGLES.map(([key, field, description]) => [
        field,
        t.boolean({
          nullable: true,
          description,
          resolve: (h: HookRecord) => h[key] ?? (key === 'wiki_page_events' ? (h as unknown as { wiki_events?: boolean }).wiki_events : null) ?? null,
        }),
      ]),
    ),
  }),
});

export const ProjectHookConnection = builder.connectionObject(
  { type: ProjectHook, name: 'ProjectHookConnection', description: 'A page of project hooks.' },
  { name: 'ProjectHookEdge', description: 'A hook with its cursor.' },
);

builder.objectFields(Project, (t) => ({
  hooks: t.connection(
    {
      type: ProjectHook,
      description: 'Webhooks of the project (Maintainer role).',
      resolve: (p, args, ctx) => resolveConnection(args, ctx.defaultPageSize, (page, perPage) => ctx.gitlab.client.listHooks(p.id, { page, perPage })),
    },
    ProjectHookConnection,
  ),
  hook: t.field({
    complexity: UPSTREAM_CALL,
    type: ProjectHook,
    nullable: true,
    description: 'One webhook of the project; null when it does not exist.',
    args: { id: t.arg.id({ required: true, description: 'Global id or numeric id of the hook.' }) },
    resolve: (p, args, ctx) => {
      const [projectId, hookId] = hookKeyFromArg(String(args.id), p.id);
      return projectId === p.id ? ctx.gitlab.client.getHook(projectId, hookId) : null;
    },
  }),
}));

// --- mutations ------------------------------------------------------------------

interface HookPayloadShape {
  hook: HookRecord | null;
  errors: UserErrorShape[];
}

type FieldBuilder = Parameters<Parameters<typeof builder.inputType>[1]['fields']>[0];

function hookFields(t: FieldBuilder, create: boolean) {
  return {
    url: t.string({ required: create, description: 'URL to post events to.' }),
    token: t.string({ description: 'Secret GitLab sends in X-Gitlab-Token so the receiver can check deliveries. Write-only: never returned or logged.' }),
    pushEventsBranchFilter: t.string({ description: 'Branches whose pushes trigger the hook, read as `branchFilterStrategy` says.' }),
    branchFilterStrategy: t.field({ type: BranchFilterStrategy, description: 'How `pushEventsBranchFilter` is read (GitLab 16+).' }),
    customHeaders: t.field({
      type: [HookKeyValue],
      description: "Headers sent with each delivery (GitLab 17+); replaces the hook's list. Values are write-only.",
    }),
    urlVariables: t.field({
      type: [HookKeyValue],
      description: "Variables interpolated into `{name}` parts of the URL (GitLab 16+); replaces the hook's list. Values are write-only.",
    }),
    enableSslVerification: t.boolean({ description: "Verifies the receiver's TLS certificate." }),
    ...Object.fromEntries(TOGGLES.map(([, field, description]) => [field, t.boolean({ description: description.replace('Indicates', 'Makes it so') })])),
  };
}

function hookParams(input: Readonly<Record<string, unknown>>, create: boolean): Record<string, unknown> {
  const params: Record<string, unknown> = {
    url: input.url ?? undefined,
    token: input.token ?? undefined,
    push_events_branch_filter: input.pushEventsBranchFilter ?? undefined,
    branch_filter_strategy: input.branchFilterStrategy ?? undefined,
    custom_headers: input.customHeaders ?? undefined,
    url_variables: input.urlVariables ?? undefined,
    enable_ssl_verification: input.enableSslVerification ?? undefined,
  };
  for (const [key, field] of TOGGLES) params[key] = input[field] ?? undefined;
  // GitLab 11 reads wiki_events on edit; current GitLab reads wiki_page_events: send both.
  if (!create && params.wiki_page_events !== undefined) params.wiki_events = params.wiki_page_events;
  return params;
}

const HookPayload = (name: string) =>
  builder.objectRef<HookPayloadShape>(`${name}Payload`).implement({
    description: `Result of ${name[0]?.toLowerCase()}${name.slice(1)}.`,
    fields: (t) => ({
      hook: t.field({
        type: ProjectHook,
        nullable: true,
        description: 'The hook; on delete, the removed hook (null if there was none).',
        resolve: (p) => p.hook,
      }),
      errors: t.field({ type: [UserError], nullable: false, description: 'Why the mutation was refused; empty on success.', resolve: (p) => p.errors }),
    }),
  });

const HOOK_RENAMES = { wiki_events: 'wikiPageEvents' };

builder.mutationFields((t) => ({
  projectHookCreate: t.field({
    type: HookPayload('ProjectHookCreate'),
    nullable: true,
    description: 'Adds a webhook to a project (Maintainer role).',
    args: {
      input: t.arg({
        type: builder.inputType('ProjectHookCreateInput', {
          description: 'The project and the new hook.',
          fields: (f) => ({ projectId: f.id({ required: true, description: 'Global id, numeric id or full path of the project.' }), ...hookFields(f, true) }),
        }),
        required: true,
        description: 'The new hook.',
      }),
    },
    resolve: async (_root, { input }, ctx) => {
      if (!/^https?:\/\//i.test(String(input.url))) return { hook: null, errors: [inputError('url', 'url must be an http or https URL.')] };
      const { result, errors } = await runMutation(
        () => ctx.gitlab.client.createHook(projectIdFromArg(String(input.projectId), 'projectId'), hookParams(input, true)),
        HOOK_RENAMES,
      );
      return { hook: result, errors };
    },
  }),
  projectHookUpdate: t.field({
    type: HookPayload('ProjectHookUpdate'),
    nullable: true,
    description: 'Changes a webhook (Maintainer role). Fields left out stay as they are; changing the URL on current GitLab resets the token.',
    args: {
      input: t.arg({
        type: builder.inputType('ProjectHookUpdateInput', {
          description: 'The hook and its changes.',
          fields: (f) => ({ id: f.id({ required: true, description: 'Global id of the hook.' }), ...hookFields(f, false) }),
        }),
        required: true,
        description: 'The changes.',
      }),
    },
    resolve: async (_root, { input }, ctx) => {
      const [projectId, hookId] = hookKeyFromArg(String(input.id));
      let params = hookParams(input, false);
      if (params.url === undefined) {
        // GitLab 11 requires url on edit: keep the current one.
        const current = await ctx.gitlab.client.getHook(projectId, hookId);
        if (!current) return { hook: null, errors: [inputError('id', 'The hook does not exist.', 'INVALID')] };
        params = { ...params, url: current.url };
      }
      const { result, errors } = await runMutation(() => ctx.gitlab.client.updateHook(projectId, hookId, params), HOOK_RENAMES);
      return { hook: result, errors };
    },
  }),
  projectHookDelete: t.field({
    type: HookPayload('ProjectHookDelete'),
    nullable: true,
    description: 'Removes a webhook (Maintainer role); removing a hook that is gone is not an error.',
    args: {
      input: t.arg({
        type: builder.inputType('ProjectHookDeleteInput', {
          description: 'The hook to remove.',
          fields: (f) => ({ id: f.id({ required: true, description: 'Global id of the hook.' }) }),
        }),
        required: true,
        description: 'The hook.',
      }),
    },
    resolve: async (_root, { input }, ctx) => {
      const [projectId, hookId] = hookKeyFromArg(String(input.id));
      const { result, errors } = await runMutation(() => ctx.gitlab.client.deleteHook(projectId, hookId));
      return { hook: result, errors };
    },
  }),
}));
