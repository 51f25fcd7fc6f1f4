/**
 * The spec's project write table: every parameter, its type, and which forms
 * accept it (C = POST /projects, U = POST /projects/user/:user_id,
 * E = PUT /projects/:id). Input types are generated from it, so a parameter a
 * form does not accept is not in that form's input.
 */
import type { WriteParams } from '../../upstreams/gitlab/client.js';
import type { builder } from '../builder.js';
import { MergeMethod, ProjectVisibility } from './project-enums.js';

type ParamType = 'String' | 'Boolean' | 'Int' | 'SafeInt' | 'StringList' | 'Visibility' | 'MergeMethod' | 'File';

interface WriteParam {
  /** GitLab's parameter name. */
  name: string;
  type: ParamType;
  forms: string;
  description: string;
}

const PARAMS: readonly WriteParam[] = [
  { name: 'name', type: 'String', forms: 'CUE', description: 'Name of the project; on create, defaults to the path.' },
  { name: 'path', type: 'String', forms: 'CUE', description: 'Path of the project; on create, generated from the name (lowercased, dashes) when absent.' },
  { name: 'namespace_id', type: 'SafeInt', forms: 'CU', description: "Numeric id of the namespace to create the project in; defaults to the caller's." },
  { name: 'default_branch', type: 'String', forms: 'CE', description: 'Default branch (master when absent).' },
  { name: 'description', type: 'String', forms: 'CUE', description: 'Description of the project.' },
  { name: 'issues_enabled', type: 'Boolean', forms: 'CUE', description: 'Enables issues.' },
  { name: 'merge_requests_enabled', type: 'Boolean', forms: 'CUE', description: 'Enables merge requests.' },
  { name: 'jobs_enabled', type: 'Boolean', forms: 'CUE', description: 'Enables CI jobs.' },
  { name: 'wiki_enabled', type: 'Boolean', forms: 'CUE', description: 'Enables the wiki.' },
  { name: 'snippets_enabled', type: 'Boolean', forms: 'CUE', description: 'Enables snippets.' },
  { name: 'resolve_outdated_diff_discussions', type: 'Boolean', forms: 'CUE', description: 'Resolves discussions on outdated diff lines automatically.' },
  { name: 'container_registry_enabled', type: 'Boolean', forms: 'CUE', description: 'Enables the container registry.' },
  { name: 'shared_runners_enabled', type: 'Boolean', forms: 'CUE', description: "Lets shared runners run the project's jobs." },
  { name: 'visibility', type: 'Visibility', forms: 'CUE', description: 'Visibility of the project.' },
  {
    name: 'import_url',
    type: 'String',
    forms: 'CUE',
    description:
      'URL to import the repository from; for a private source, credentials may be embedded (an access key with api scope). Never returned or logged.',
  },
  { name: 'public_builds', type: 'Boolean', forms: 'CUE', description: 'Makes CI jobs visible to non-members.' },
  { name: 'only_allow_merge_if_pipeline_succeeds', type: 'Boolean', forms: 'CUE', description: 'Merges merge requests only after a successful pipeline.' },
  {
    name: 'only_allow_merge_if_all_discussions_are_resolved',
    type: 'Boolean',
    forms: 'CUE',
    description: 'Merges merge requests only when all discussions are resolved.',
  },
  { name: 'merge_method', type: 'MergeMethod', forms: 'CUE', description: 'How merge requests are merged.' },
  { name: 'lfs_enabled', type: 'Boolean', forms: 'CUE', description: 'Enables Git LFS.' },
  { name: 'request_access_enabled', type: 'Boolean', forms: 'CUE', description: 'Lets users request access.' },
  { name: 'tag_list', type: 'StringList', forms: 'CUE', description: 'The final list of tags (topics) of the project.' },
  { name: 'avatar', type: 'File', forms: 'CUE', description: 'Avatar image, sent with the GraphQL multipart request spec.' },
  { name: 'printing_merge_request_link_enabled', type: 'Boolean', forms: 'CU', description: 'Prints a link to create or view a merge request on push.' },
  { name: 'ci_config_path', type: 'String', forms: 'CUE', description: 'Path of the CI configuration file.' },
  { name: 'repository_storage', type: 'String', forms: 'CUE', description: 'Storage shard for the repository (admins only).' },
  { name: 'approvals_before_merge', type: 'Int', forms: 'CUE', description: 'Number of approvals a merge request needs.' },
  { name: 'external_authorization_classification_label', type: 'String', forms: 'UE', description: 'Classification label for external authorization.' },
  { name: 'mirror', type: 'Boolean', forms: 'CUE', description: 'Enables pull mirroring (paid tier).' },
  { name: 'mirror_trigger_builds', type: 'Boolean', forms: 'CUE', description: 'Runs pipelines for mirror updates.' },
  { name: 'initialize_with_readme', type: 'Boolean', forms: 'C', description: 'Creates the repository with a README (false by default).' },
  { name: 'mirror_user_id', type: 'SafeInt', forms: 'E', description: 'Numeric id of the user mirror updates are made as.' },
  { name: 'only_mirror_protected_branches', type: 'Boolean', forms: 'E', description: 'Mirrors protected branches only.' },
  { name: 'mirror_overwrites_diverged_branches', type: 'Boolean', forms: 'E', description: 'Overwrites diverged branches when mirroring.' },
  { name: 'packages_enabled', type: 'Boolean', forms: 'E', description: 'Enables the package registry.' },
];

export type ProjectForm = 'C' | 'U' | 'E';

function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

type InputFieldBuilder = Parameters<Parameters<typeof builder.inputType>[1]['fields']>[0];

/** The input fields of one form, named in camelCase; `required` makes those fields non-null. */
export function projectWriteFields(t: InputFieldBuilder, form: ProjectForm, required: readonly string[] = []) {
  const fields: Record<string, ReturnType<InputFieldBuilder['string']>> = {};
  for (const param of PARAMS.filter((p) => p.forms.includes(form))) {
    const options = { description: param.description, required: required.includes(param.name) };
    const type = {
      String: 'String',
      Boolean: 'Boolean',
      Int: 'Int',
      SafeInt: 'SafeInt',
      StringList: ['String'],
      Visibility: ProjectVisibility,
      MergeMethod: MergeMethod,
      File: 'File',
    }[param.type];
    fields[camel(param.name)] = t.field({ ...options, type: type as 'String' });
  }
  return fields;
}

/** The REST parameters for an input of `form`, in GitLab's names; fields not given are left out. */
export function toWriteParams(input: Readonly<Record<string, unknown>>, form: ProjectForm): { params: Record<string, unknown>; files: Record<string, File> } {
  const params: Record<string, unknown> = {};
  const files: Record<string, File> = {};
  for (const param of PARAMS.filter((p) => p.forms.includes(form))) {
    const value = input[camel(param.name)];
    if (value === undefined || value === null) continue;
    if (param.type === 'File') files[param.name] = value as File;
    else params[param.name] = value;
  }
  return { params, files };
}

export type { WriteParams };
