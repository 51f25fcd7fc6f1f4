/**
 * Push rules (a paid-tier feature; the sandbox behaves as a licensed
 * instance): GET/POST/PUT/DELETE /projects/:id/push_rule, Maintainer+
 * (ee/lib/api/project_push_rule.rb). GitLab answers GET without a rule with
 * 200 and `null` (`present nil`), POST when one exists with 422, PUT and
 * DELETE without one with 404 "Push Rule Not Found", DELETE with 204.
 */
import type { JsonResponse } from '../http-util.js';
import { FORBIDDEN, notFound, roleIn, UNAUTHORIZED, userProject, validationError, type ApiRequest, type RouteHandler } from './api-request.js';
import { Params } from './params.js';
import { formatTime, type JsonObject } from './project-records.js';
import { ACCESS, type SandboxProject, type SandboxPushRule } from './store.js';

const REGEX_FIELDS = ['commit_message_regex', 'commit_message_negative_regex', 'branch_name_regex', 'author_email_regex', 'file_name_regex'] as const;
const BOOLEAN_FIELDS = [
  'deny_delete_tag',
  'member_check',
  'prevent_secrets',
  'commit_committer_check',
  'commit_committer_name_check',
  'reject_unsigned_commits',
  'reject_non_dco_commits',
] as const;
/** `at_least_one_of` of push_rule_params, in GitLab's order. */
const ALL_FIELDS = [
  'deny_delete_tag',
  'member_check',
  'prevent_secrets',
  'commit_message_regex',
  'commit_message_negative_regex',
  'branch_name_regex',
  'author_email_regex',
  'file_name_regex',
  'max_file_size',
  'commit_committer_check',
  'commit_committer_name_check',
  'reject_unsigned_commits',
  'reject_non_dco_commits',
];

type RegexField = (typeof REGEX_FIELDS)[number];
type BooleanField = (typeof BOOLEAN_FIELDS)[number];

const REGEX_KEYS: Record<RegexField, keyof SandboxPushRule> = {
  commit_message_regex: 'commitMessageRegex',
  commit_message_negative_regex: 'commitMessageNegativeRegex',
  branch_name_regex: 'branchNameRegex',
  author_email_regex: 'authorEmailRegex',
  file_name_regex: 'fileNameRegex',
};
const BOOLEAN_KEYS: Record<BooleanField, keyof SandboxPushRule> = {
  deny_delete_tag: 'denyDeleteTag',
  member_check: 'memberCheck',
  prevent_secrets: 'preventSecrets',
  commit_committer_check: 'commitCommitterCheck',
  commit_committer_name_check: 'commitCommitterNameCheck',
  reject_unsigned_commits: 'rejectUnsignedCommits',
  reject_non_dco_commits: 'rejectNonDcoCommits',
};

/** EE::API::Entities::ProjectPushRule, the current field set (reference example GET_projects_id_push_rule.json). */
export function pushRuleRecord(rule: SandboxPushRule): JsonObject {
  return {
    id: rule.id,
    project_id: rule.projectId,
    commit_message_regex: rule.commitMessageRegex,
    commit_message_negative_regex: rule.commitMessageNegativeRegex,
    branch_name_regex: rule.branchNameRegex,
    deny_delete_tag: rule.denyDeleteTag,
    created_at: formatTime(rule.createdAt),
    member_check: rule.memberCheck,
    prevent_secrets: rule.preventSecrets,
    author_email_regex: rule.authorEmailRegex,
    file_name_regex: rule.fileNameRegex,
    max_file_size: rule.maxFileSize,
    commit_committer_check: rule.commitCommitterCheck,
    commit_committer_name_check: rule.commitCommitterNameCheck,
    reject_unsigned_commits: rule.rejectUnsignedCommits,
    reject_non_dco_commits: rule.rejectNonDcoCommits,
  };
}

function adminProject(request: ApiRequest): SandboxProject | JsonResponse {
  if (!request.viewer) return UNAUTHORIZED;
  const project = userProject(request);
  if ('status' in project) return project;
  return roleIn(request, project) >= ACCESS.maintainer ? project : FORBIDDEN;
}

/** Reads the write parameters; Grape type errors go to `params`, model validation errors are returned. */
function readChanges(params: Params): { changes: Partial<SandboxPushRule>; invalid: Record<string, string[]> } {
  const changes: Partial<SandboxPushRule> = {};
  const invalid: Record<string, string[]> = {};
  for (const field of BOOLEAN_FIELDS) {
    const value = params.boolean(field);
    if (value !== undefined) Object.assign(changes, { [BOOLEAN_KEYS[field]]: value });
  }
  for (const field of REGEX_FIELDS) {
    const value = params.raw(field);
    if (value === undefined) continue;
    try {
      new RegExp(value);
      Object.assign(changes, { [REGEX_KEYS[field]]: value });
    } catch (error) {
      // PushRule validates with RE2 (`untrusted_regexp`); JavaScript's RegExp stands in for it.
      invalid[field] = [`not valid RE2 syntax: ${error instanceof Error ? error.message : String(error)}`];
    }
  }
  const maxFileSize = params.integer('max_file_size');
  if (maxFileSize !== undefined) {
    if (maxFileSize < 0) invalid.max_file_size = ['must be greater than or equal to 0'];
    else changes.maxFileSize = maxFileSize;
  }
  return { changes, invalid };
}

/** GET /projects/:id/push_rule: the rule, or 200 with `null` when the project has none. */
export const getPushRule: RouteHandler = (request) => {
  const project = adminProject(request);
  if ('status' in project) return project;
  const rule = request.store.pushRules.get(project.id);
  return { status: 200, body: rule ? pushRuleRecord(rule) : null };
};

/** POST /projects/:id/push_rule: 201; 422 when the project already has one. */
export const addPushRule: RouteHandler = (request) => {
  const params = new Params(request.input);
  params.atLeastOneOf(ALL_FIELDS);
  const { changes, invalid } = readChanges(params);
  if (!request.viewer) return UNAUTHORIZED;
  const failure = params.failure();
  if (failure) return failure;
  const project = adminProject(request);
  if ('status' in project) return project;
  // error!("Project push rule exists", 422); current GitLab renders it under "message".
  if (request.store.pushRules.has(project.id)) return { status: 422, body: { message: 'Project push rule exists' } };
  if (Object.keys(invalid).length > 0) return validationError(invalid);
  const rule: SandboxPushRule = {
    id: request.store.nextId('push_rule'),
    projectId: project.id,
    createdAt: request.runtime.clock.now(),
    commitMessageRegex: '',
    commitMessageNegativeRegex: '',
    branchNameRegex: '',
    authorEmailRegex: '',
    fileNameRegex: '',
    denyDeleteTag: false,
    memberCheck: false,
    preventSecrets: false,
    maxFileSize: 0,
    commitCommitterCheck: false,
    commitCommitterNameCheck: false,
    rejectUnsignedCommits: false,
    rejectNonDcoCommits: false,
    ...changes,
  };
  request.store.pushRules.set(project.id, rule);
  return { status: 201, body: pushRuleRecord(rule) };
};

/** PUT /projects/:id/push_rule: 404 "Push Rule Not Found" when there is none. */
export const editPushRule: RouteHandler = (request) => {
  const params = new Params(request.input);
  params.atLeastOneOf(ALL_FIELDS);
  const { changes, invalid } = readChanges(params);
  if (!request.viewer) return UNAUTHORIZED;
  const failure = params.failure();
  if (failure) return failure;
  const project = adminProject(request);
  if ('status' in project) return project;
  const rule = request.store.pushRules.get(project.id);
  if (!rule) return notFound('Push Rule');
  if (Object.keys(invalid).length > 0) return validationError(invalid);
  Object.assign(rule, changes);
  return { status: 200, body: pushRuleRecord(rule) };
};

/** DELETE /projects/:id/push_rule: 204, or 404 when there is none (GitLab, where the spec says idempotent). */
export const deletePushRule: RouteHandler = (request) => {
  const project = adminProject(request);
  if ('status' in project) return project;
  if (!request.store.pushRules.delete(project.id)) return notFound('Push Rule');
  return { status: 204 };
};
