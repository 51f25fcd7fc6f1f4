/** A project's push rule (paid tier): Project.pushRule and its mutations. */
import type { PushRuleRecord } from '../../upstreams/gitlab/records.js';
import { builder } from '../builder.js';
import { UPSTREAM_CALL } from '../cost.js';
import { runMutation, UserError, type UserErrorShape } from '../user-error.js';
import { Project, projectIdFromArg } from './project.js';

const TEXT = [
  ['commit_message_regex', 'commitMessageRegex', 'Regular expression every commit message must match.'],
  ['commit_message_negative_regex', 'commitMessageNegativeRegex', 'Regular expression no commit message may match (current GitLab).'],
  ['branch_name_regex', 'branchNameRegex', 'Regular expression every branch name must match.'],
  ['author_email_regex', 'authorEmailRegex', 'Regular expression every author email must match.'],
  ['file_name_regex', 'fileNameRegex', 'Regular expression no committed file name may match.'],
] as const;

const FLAGS = [
  ['deny_delete_tag', 'denyDeleteTag', 'Indicates tags cannot be deleted.'],
  ['member_check', 'memberCheck', 'Indicates commit authors must be existing users.'],
  ['prevent_secrets', 'preventSecrets', 'Indicates files likely to contain secrets are rejected.'],
  ['commit_committer_check', 'commitCommitterCheck', 'Indicates the committer must be the pushing user (current GitLab).'],
  ['commit_committer_name_check', 'commitCommitterNameCheck', 'Indicates the committer name must match the user (current GitLab).'],
  ['reject_unsigned_commits', 'rejectUnsignedCommits', 'Indicates unsigned commits are rejected (current GitLab).'],
  ['reject_non_dco_commits', 'rejectNonDcoCommits', 'Indicates commits without a DCO sign-off are rejected (current GitLab).'],
] as const;

export const PushRule = builder.objectRef<PushRuleRecord>('PushRule').implement({
  description: 'Rules every push to a project must pass (paid tier).',
  fields: (t) => ({
    restId: t.field({ type: 'SafeInt', description: 'Numeric id of the push rule.', resolve: (r) => r.id }),
    projectId: t.field({ type: 'SafeInt', description: 'Numeric id of the project.', resolve: (r) => r.project_id }),
    createdAt: t.field({ type: 'DateTime', description: 'Time the rule was created.', resolve: (r) => r.created_at }),
    maxFileSize: t.int({
      nullable: true,
      description: 'Largest file a push may hold, in MB (0: no limit).',
      resolve: (r) => r.max_file_size ?? null,
    }),
    // GitLab sends "" for a rule that was set empty and null for one never set: both kept as sent.
    ...Object.fromEntries(
      TEXT.map(([key, field, description]) => [
        field,
        t.string({
          nullable: true,
          description: `${description} Empty when set empty, null when never set.`,
          resolve: (r: PushRuleRecord) => r[key] ?? null,
        }),
      ]),
    ),
    ...Object.fromEntries(
      FLAGS.map(([key, field, description]) => [field, t.boolean({ nullable: true, description, resolve: (r: PushRuleRecord) => r[key] ?? null })]),
    ),
  }),
});

builder.objectField(Project, 'pushRule', (t) =>
  t.field({
    complexity: UPSTREAM_CALL,
    type: PushRule,
    nullable: true,
    description: 'Push rule of the project; null when it has none.',
    resolve: (p, _args, ctx) => ctx.gitlab.client.getPushRule(p.id),
  }),
);

interface PushRulePayloadShape {
  pushRule: PushRuleRecord | null;
  errors: UserErrorShape[];
}

const PushRulePayload = (name: string) =>
  builder.objectRef<PushRulePayloadShape>(`${name}Payload`).implement({
    description: `Result of ${name[0]?.toLowerCase()}${name.slice(1)}.`,
    fields: (t) => ({
      pushRule: t.field({
        type: PushRule,
        nullable: true,
        description: 'The push rule after the mutation; null after a delete or a failure.',
        resolve: (p) => p.pushRule,
      }),
      errors: t.field({ type: [UserError], nullable: false, description: 'Why the mutation was refused; empty on success.', resolve: (p) => p.errors }),
    }),
  });

type FieldBuilder = Parameters<Parameters<typeof builder.inputType>[1]['fields']>[0];

const ruleFields = (t: FieldBuilder) => ({
  projectId: t.id({ required: true, description: 'Global id, numeric id or full path of the project.' }),
  maxFileSize: t.int({ description: 'Largest file a push may hold, in MB.' }),
  ...Object.fromEntries(TEXT.map(([, field, description]) => [field, t.string({ description })])),
  ...Object.fromEntries(FLAGS.map(([, field, description]) => [field, t.boolean({ description: description.replace('Indicates', 'Makes it so') })])),
});

function ruleParams(input: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const params: Record<string, unknown> = { max_file_size: input.maxFileSize ?? undefined };
  for (const [key, field] of [...TEXT, ...FLAGS]) params[key] = input[field] ?? undefined;
  return params;
}

for (const [name, create] of [
  ['projectPushRuleCreate', true],
  ['projectPushRuleUpdate', false],
] as const) {
  const Name = `P${name.slice(1)}`;
  builder.mutationField(name, (t) =>
    t.field({
      type: PushRulePayload(Name),
      nullable: true,
      description: create ? 'Adds a push rule to a project.' : "Changes a project's push rule; fields left out stay as they are.",
      args: {
        input: t.arg({
          type: builder.inputType(`${Name}Input`, { description: "The project and the rule's settings.", fields: ruleFields }),
          required: true,
          description: 'The rule.',
        }),
      },
      resolve: async (_root, { input }, ctx) => {
        const { result, errors } = await runMutation(() =>
          ctx.gitlab.client.savePushRule(projectIdFromArg(String(input.projectId), 'projectId'), ruleParams(input), create),
        );
        return { pushRule: result, errors };
      },
    }),
  );
}

builder.mutationField('projectPushRuleDelete', (t) =>
  t.field({
    type: PushRulePayload('ProjectPushRuleDelete'),
    nullable: true,
    description: "Removes a project's push rule; removing a rule that is gone is not an error.",
    args: {
      input: t.arg({
        type: builder.inputType('ProjectPushRuleDeleteInput', {
          description: 'The project.',
          fields: (f) => ({ projectId: f.id({ required: true, description: 'Global id, numeric id or full path of the project.' }) }),
        }),
        required: true,
        description: 'The project.',
      }),
    },
    resolve: async (_root, { input }, ctx) => {
      const { errors } = await runMutation(() => ctx.gitlab.client.deletePushRule(projectIdFromArg(String(input.projectId), 'projectId')));
      return { pushRule: null, errors };
    },
  }),
);
