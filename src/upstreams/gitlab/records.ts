/**
 * GitLab REST records exactly as the API returns them (snake_case). Fields
 * are optional wherever some endpoint or form leaves them out: the simple
 * form, the fork list, `forked_from_project`, or an older or newer server.
 */

export interface NamespaceRecord {
  id: number;
  name: string;
  path: string;
  kind: string;
  full_path: string;
  parent_id?: number | null;
  avatar_url?: string | null;
  web_url?: string;
}

export interface OwnerRecord {
  id: number;
  name: string;
  created_at?: string;
  username?: string;
  state?: string;
  avatar_url?: string | null;
  web_url?: string;
}

export interface AccessRecord {
  access_level: number;
  notification_level: number | null;
}

export interface PermissionsRecord {
  project_access: AccessRecord | null;
  group_access: AccessRecord | null;
}

export interface SharedGroupRecord {
  group_id: number;
  group_name: string;
  group_full_path: string;
  group_access_level: number;
  expires_at?: string | null;
}

export interface StatisticsRecord {
  commit_count: number;
  storage_size: number;
  repository_size: number;
  lfs_objects_size: number;
  job_artifacts_size: number;
  wiki_size?: number;
  packages_size?: number;
  snippets_size?: number;
  uploads_size?: number;
}

export interface LicenseRecord {
  key: string;
  name: string;
  nickname: string | null;
  html_url: string | null;
  source_url: string | null;
}

export interface ProjectLinksRecord {
  self: string;
  issues?: string;
  merge_requests?: string;
  repo_branches: string;
  labels: string;
  events: string;
  members: string;
}

/** A project in any of its forms; only `id` is always there. */
export interface ProjectRecord {
  id: number;
  description?: string | null;
  default_branch?: string | null;
  visibility?: string;
  ssh_url_to_repo?: string;
  http_url_to_repo?: string;
  web_url?: string;
  readme_url?: string | null;
  tag_list?: string[];
  topics?: string[];
  owner?: OwnerRecord | null;
  name?: string;
  name_with_namespace?: string;
  path?: string;
  path_with_namespace?: string;
  issues_enabled?: boolean;
  open_issues_count?: number;
  merge_requests_enabled?: boolean;
  jobs_enabled?: boolean;
  wiki_enabled?: boolean;
  snippets_enabled?: boolean;
  resolve_outdated_diff_discussions?: boolean;
  container_registry_enabled?: boolean;
  created_at?: string;
  updated_at?: string;
  last_activity_at?: string;
  creator_id?: number;
  namespace?: NamespaceRecord;
  import_status?: string;
  import_error?: string | null;
  permissions?: PermissionsRecord;
  archived?: boolean;
  avatar_url?: string | null;
  license_url?: string | null;
  license?: LicenseRecord | null;
  shared_runners_enabled?: boolean;
  forks_count?: number;
  star_count?: number;
  runners_token?: string;
  public_jobs?: boolean;
  shared_with_groups?: SharedGroupRecord[];
  repository_storage?: string;
  only_allow_merge_if_pipeline_succeeds?: boolean;
  only_allow_merge_if_all_discussions_are_resolved?: boolean;
  /** GitLab's API entity spells it in the singular; its docs (and the spec) in the plural. */
  printing_merge_request_link_enabled?: boolean;
  printing_merge_requests_link_enabled?: boolean;
  request_access_enabled?: boolean;
  merge_method?: string;
  approvals_before_merge?: number;
  statistics?: StatisticsRecord;
  _links?: ProjectLinksRecord;
  forked_from_project?: ProjectRecord;
  empty_repo?: boolean;
  ci_config_path?: string | null;
  lfs_enabled?: boolean;
  packages_enabled?: boolean | null;
  import_url?: string | null;
  external_authorization_classification_label?: string | null;
  mirror?: boolean;
  mirror_trigger_builds?: boolean;
  mirror_user_id?: number;
  only_mirror_protected_branches?: boolean;
  mirror_overwrites_diverged_branches?: boolean;
}

/** A member of a project as GET /projects/:id/users lists it. */
export interface ProjectUserRecord {
  id: number;
  username: string;
  name: string;
  state: string;
  avatar_url: string | null;
  web_url: string;
}

/** GET /projects/:id/languages: language name to percentage. */
export type LanguagesRecord = Record<string, number>;

/** A project webhook. The secret `token` is write-only: GitLab never returns it. */
export interface HookRecord {
  id: number;
  /** GitLab 19.0+: whether the hook keeps a Standard Webhooks signing token (signs its deliveries). */
  signing_token_present?: boolean;
  url: string;
  project_id: number;
  created_at: string;
  push_events?: boolean;
  push_events_branch_filter?: string | null;
  issues_events?: boolean;
  confidential_issues_events?: boolean;
  merge_requests_events?: boolean;
  tag_push_events?: boolean;
  note_events?: boolean;
  confidential_note_events?: boolean;
  job_events?: boolean;
  pipeline_events?: boolean;
  wiki_page_events?: boolean;
  deployment_events?: boolean;
  releases_events?: boolean;
  feature_flag_events?: boolean;
  milestone_events?: boolean;
  emoji_events?: boolean;
  resource_access_token_events?: boolean;
  repository_update_events?: boolean;
  enable_ssl_verification?: boolean;
  name?: string | null;
  description?: string | null;
  alert_status?: string;
  disabled_until?: string | null;
  branch_filter_strategy?: string;
  /** Keys only: GitLab masks the values (Hook#masked_url_variables). */
  url_variables?: { key: string }[];
  /** Keys only: GitLab masks the values (Hook#masked_custom_headers). */
  custom_headers?: { key: string }[];
}

/** A project's push rule (paid tier). */
export interface PushRuleRecord {
  id: number;
  project_id: number;
  created_at: string;
  commit_message_regex?: string | null;
  commit_message_negative_regex?: string | null;
  branch_name_regex?: string | null;
  author_email_regex?: string | null;
  file_name_regex?: string | null;
  deny_delete_tag?: boolean | null;
  member_check?: boolean;
  prevent_secrets?: boolean;
  max_file_size?: number;
  commit_committer_check?: boolean | null;
  commit_committer_name_check?: boolean | null;
  reject_unsigned_commits?: boolean | null;
  reject_non_dco_commits?: boolean | null;
}

export interface CommitRecord {
  id: string;
  short_id: string;
  title: string;
  message?: string;
  author_name: string;
  author_email: string;
  created_at: string;
  authored_date?: string;
  committed_date?: string;
}

export interface PipelineRefRecord {
  id: number;
  project_id?: number;
  ref: string;
  sha: string;
  status: string;
  web_url?: string;
  source?: string;
  created_at?: string;
  updated_at?: string;
}

/** A pipeline in full (Entities::Ci::PipelineWithMetadata); lists carry only the basic fields and `name`. */
export interface PipelineRecord extends PipelineRefRecord {
  project_id: number;
  iid?: number;
  name?: string | null;
  before_sha?: string | null;
  tag?: boolean;
  yaml_errors?: string | null;
  user?: OwnerRecord | null;
  started_at?: string | null;
  finished_at?: string | null;
  committed_at?: string | null;
  duration?: number | null;
  queued_duration?: number | null;
  coverage?: string | number | null;
  detailed_status?: { group?: string; text?: string; label?: string; icon?: string; details_path?: string } | null;
}

/** A variable of a pipeline (Entities::Ci::Variable). */
export interface PipelineVariableRecord {
  key: string;
  value: string | null;
  variable_type?: string;
  raw?: boolean;
}

/** TestReportSummaryEntity: JUnit totals and one entry per suite. */
export interface TestReportSummaryRecord {
  total: { time: number; count: number; success: number; failed: number; skipped: number; error: number; suite_error?: string | null };
  test_suites: {
    name: string;
    total_time: number;
    total_count: number;
    success_count: number;
    failed_count: number;
    skipped_count: number;
    error_count: number;
    build_ids?: number[];
    suite_error?: string | null;
  }[];
}

/** A bridge job (Entities::Ci::Bridge): a job that triggers a downstream pipeline. */
export interface BridgeRecord {
  id: number;
  name: string;
  stage: string;
  status: string;
  ref: string;
  created_at?: string;
  started_at?: string | null;
  finished_at?: string | null;
  web_url?: string;
  downstream_pipeline?: PipelineRefRecord | null;
}

export interface ArtifactRecord {
  file_type: string;
  size: number;
  filename: string;
  file_format: string | null;
}

export interface RunnerRecord {
  id: number;
  description?: string | null;
  name?: string | null;
  active?: boolean;
  paused?: boolean;
  is_shared?: boolean;
  runner_type?: string;
  online?: boolean | null;
  status?: string;
}

export interface JobUserRecord extends OwnerRecord {
  bio?: string | null;
  location?: string | null;
  public_email?: string | null;
  skype?: string;
  linkedin?: string;
  twitter?: string;
  website_url?: string;
  organization?: string | null;
}

/** A CI job. `project_id` is not in GitLab's record: the client adds it, since every job path needs it. */
export interface JobRecord {
  id: number;
  project_id: number;
  name: string;
  stage: string;
  ref: string;
  status: string;
  tag: boolean;
  allow_failure?: boolean;
  coverage?: number | null;
  created_at: string;
  started_at?: string | null;
  finished_at?: string | null;
  erased_at?: string | null;
  duration?: number | null;
  queued_duration?: number | null;
  web_url?: string;
  failure_reason?: string;
  tag_list?: string[];
  archived?: boolean;
  artifacts_expire_at?: string | null;
  artifacts?: ArtifactRecord[];
  artifacts_file?: { filename: string; size: number };
  runner?: RunnerRecord | null;
  download_url?: string | null;
  commit?: CommitRecord;
  pipeline?: PipelineRefRecord;
  user?: JobUserRecord | null;
}

/** POST /projects/:id/uploads. */
export interface UploadRecord {
  alt: string;
  url: string;
  markdown: string;
  full_path?: string;
}
