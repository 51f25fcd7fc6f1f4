/**
 * Project mutations, named noun-then-verb, each with one `input` and a
 * payload `{ project, errors }`. User-caused refusals (400, 403 role rules,
 * 409) come back in `errors`; system failures are top-level errors.
 */
import type { ProjectRecord, UploadRecord } from '../../upstreams/gitlab/records.js';
import { builder } from '../builder.js';
import type { Context } from '../context.js';
import { inputError, runMutation, UserError, type UserErrorShape } from '../user-error.js';
import { AccessLevel } from './access-level.js';
import { Project, projectIdFromArg } from './project.js';
import { projectWriteFields, toWriteParams } from './project-write-params.js';

interface ProjectPayloadShape {
  project: ProjectRecord | null;
  errors: UserErrorShape[];
  changed?: boolean;
}

const projectIdField = (t: Parameters<Parameters<typeof builder.inputType>[1]['fields']>[0]) =>
  t.id({ required: true, description: 'Global id, numeric id or full path of the project.' });

/** A payload type `<Name>Payload { project, errors }`. */
function projectPayload(name: string, description: string, projectDescription = 'The project after the mutation; null when it failed.') {
  return builder.objectRef<ProjectPayloadShape>(`${name}Payload`).implement({
    description,
    fields: (t) => ({
      project: t.field({ type: Project, nullable: true, description: projectDescription, resolve: (p) => p.project }),
      errors: t.field({ type: [UserError], nullable: false, description: 'Why the mutation refused its input; empty on success.', resolve: (p) => p.errors }),
    }),
  });
}

/** Runs a write that answers with the project. */
async function projectResult(run: () => Promise<ProjectRecord | null>, renames?: Record<string, string>): Promise<ProjectPayloadShape> {
  const { result, errors } = await runMutation(run, renames);
  return { project: result, errors };
}

/** Runs a write that answers without a body, then reads the project if the payload asks for it. */
async function projectAfter(ctx: Context, id: string, run: () => Promise<unknown>, renames?: Record<string, string>): Promise<ProjectPayloadShape> {
  const { errors } = await runMutation(run, renames);
  return { project: errors.length ? null : await ctx.gitlab.loaders.project(id), errors };
}

// --- create, update, delete -------------------------------------------------

const ProjectCreateInput = builder.inputType('ProjectCreateInput', {
  description: 'A new project; give at least a name or a path.',
  fields: (t) => projectWriteFields(t, 'C'),
});

const ProjectCreateForUserInput = builder.inputType('ProjectCreateForUserInput', {
  description: 'A new project owned by another user (admins only).',
  fields: (t) => ({
    userId: t.field({ type: 'SafeInt', required: true, description: 'Numeric id of the user who will own the project.' }),
    ...projectWriteFields(t, 'U', ['name']),
  }),
});

const ProjectUpdateInput = builder.inputType('ProjectUpdateInput', {
  description: 'Changes to a project; fields left out stay as they are.',
  fields: (t) => ({ id: projectIdField(t), ...projectWriteFields(t, 'E') }),
});

const ProjectIdInput = (name: string, description: string) => builder.inputType(name, { description, fields: (t) => ({ id: projectIdField(t) }) });

builder.mutationFields((t) => ({
  projectCreate: t.field({
    type: projectPayload('ProjectCreate', 'Result of projectCreate.'),
    nullable: true,
    description: "Creates a project in the caller's namespace or in `namespaceId`.",
    args: { input: t.arg({ type: ProjectCreateInput, required: true, description: 'The new project.' }) },
    resolve: async (_root, { input }, ctx) => {
      const { params, files } = toWriteParams(input, 'C');
      if (params.name === undefined && params.path === undefined) {
        return { project: null, errors: [inputError('name', 'Give a name or a path.', 'MISSING')] };
      }
      return projectResult(() => ctx.gitlab.client.createProject(params, undefined, files));
    },
  }),
  projectCreateForUser: t.field({
    type: projectPayload('ProjectCreateForUser', 'Result of projectCreateForUser.'),
    nullable: true,
    description: 'Creates a project owned by another user (admins only).',
    args: { input: t.arg({ type: ProjectCreateForUserInput, required: true, description: 'The new project and its owner.' }) },
    resolve: (_root, { input }, ctx) => {
      const { params, files } = toWriteParams(input, 'U');
      return projectResult(() => ctx.gitlab.client.createProject(params, input.userId, files), { user_id: 'userId' });
    },
  }),
  projectUpdate: t.field({
    type: projectPayload('ProjectUpdate', 'Result of projectUpdate.'),
    nullable: true,
    description: "Changes a project's settings.",
    args: { input: t.arg({ type: ProjectUpdateInput, required: true, description: 'The project and its changes.' }) },
    resolve: (_root, { input }, ctx) => {
      const { params, files } = toWriteParams(input, 'E');
      return projectResult(() => ctx.gitlab.client.updateProject(projectIdFromArg(String(input.id)), params, files));
    },
  }),
  projectDelete: t.field({
    type: projectPayload('ProjectDelete', 'Result of projectDelete.', 'Always null: the project is gone (or scheduled for deletion).'),
    nullable: true,
    description: 'Deletes a project with all its resources (GitLab may finish the deletion later).',
    args: {
      input: t.arg({
        type: builder.inputType('ProjectDeleteInput', {
          description: 'The project to delete.',
          fields: (f) => ({
            id: projectIdField(f),
            ifUnmodifiedSince: f.field({
              type: 'DateTime',
              description: 'Deletes only if the project has not changed since this time (else a PRECONDITION_FAILED error).',
            }),
          }),
        }),
        required: true,
        description: 'The project to delete.',
      }),
    },
    resolve: async (_root, { input }, ctx) => {
      const { errors } = await runMutation(() => ctx.gitlab.client.deleteProject(projectIdFromArg(String(input.id)), input.ifUnmodifiedSince ?? undefined));
      return { project: null, errors };
    },
  }),
}));

// --- archive, star --------------------------------------------------------------

for (const [name, archived] of [
  ['projectArchive', true],
  ['projectUnarchive', false],
] as const) {
  const Name = `P${name.slice(1)}`;
  builder.mutationField(name, (t) =>
    t.field({
      type: projectPayload(Name, `Result of ${name}.`),
      nullable: true,
      description: archived
        ? 'Archives a project, making it read-only (owners and admins; archiving an archived project changes nothing).'
        : 'Unarchives a project (owners and admins; unarchiving an active project changes nothing).',
      args: {
        input: t.arg({
          type: ProjectIdInput(`${Name}Input`, `The project to ${archived ? 'archive' : 'unarchive'}.`),
          required: true,
          description: 'The project.',
        }),
      },
      resolve: (_root, { input }, ctx) => projectResult(() => ctx.gitlab.client.setArchived(projectIdFromArg(String(input.id)), archived)),
    }),
  );
}

const StarPayload = (name: string, starred: boolean) =>
  builder.objectRef<ProjectPayloadShape>(`${name}Payload`).implement({
    description: `Result of ${name[0]?.toLowerCase()}${name.slice(1)}.`,
    fields: (t) => ({
      project: t.field({ type: Project, nullable: true, description: 'The project after the mutation.', resolve: (p) => p.project }),
      changed: t.boolean({
        description: starred
          ? 'Indicates the star was added; false when the caller had already starred the project.'
          : 'Indicates the star was removed; false when the caller had not starred the project.',
        resolve: (p) => p.changed ?? false,
      }),
      errors: t.field({ type: [UserError], nullable: false, description: 'Why the mutation refused its input; empty on success.', resolve: (p) => p.errors }),
    }),
  });

for (const [name, starred] of [
  ['projectStar', true],
  ['projectUnstar', false],
] as const) {
  const Name = `P${name.slice(1)}`;
  builder.mutationField(name, (t) =>
    t.field({
      type: StarPayload(Name, starred),
      nullable: true,
      description: starred
        ? 'Stars a project for the caller; starring a starred project is not an error.'
        : "Removes the caller's star; unstarring an unstarred project is not an error.",
      args: { input: t.arg({ type: ProjectIdInput(`${Name}Input`, 'The project.'), required: true, description: 'The project.' }) },
      resolve: async (_root, { input }, ctx) => {
        const id = projectIdFromArg(String(input.id));
        const { result, errors } = await runMutation(() => ctx.gitlab.client.setStarred(id, starred));
        if (!result) return { project: null, errors, changed: false };
        // GitLab's 304 has no body: the project is read when the payload asks for it.
        return { project: result.project ?? (await ctx.gitlab.loaders.project(id)), errors, changed: result.changed };
      },
    }),
  );
}

// --- forks ------------------------------------------------------------------

const ProjectForkInput = builder.inputType('ProjectForkInput', {
  description: 'Where to fork a project to. Give the target namespace by id or by path.',
  fields: (t) => ({
    id: projectIdField(t),
    namespaceId: t.field({ type: 'SafeInt', description: 'Numeric id of the namespace to fork into.' }),
    namespacePath: t.string({ description: 'Full path of the namespace to fork into.' }),
    path: t.string({ description: "Path of the fork; defaults to the project's." }),
    name: t.string({ description: "Name of the fork; defaults to the project's." }),
  }),
});

builder.mutationFields((t) => ({
  projectFork: t.field({
    type: projectPayload(
      'ProjectFork',
      'Result of projectFork.',
      'The new project. Forking is asynchronous: its `importStatus` reads `finished` when the fork is complete.',
    ),
    nullable: true,
    description: "Forks a project. GitLab answers at once; watch the new project's `importStatus` (or subscribe) to learn when the fork is complete.",
    args: { input: t.arg({ type: ProjectForkInput, required: true, description: 'The project and the target namespace.' }) },
    resolve: (_root, { input }, ctx) => {
      const given = [input.namespaceId, input.namespacePath].filter((v) => v !== null && v !== undefined);
      if (given.length !== 1) {
        return { project: null, errors: [inputError('namespaceId', 'Give exactly one of namespaceId and namespacePath.', 'MISSING')] };
      }
      // GitLab 11 reads `namespace` (id or path); current GitLab reads namespace_id / namespace_path. Both are sent.
      const params = {
        namespace: input.namespaceId ?? input.namespacePath,
        namespace_id: input.namespaceId ?? undefined,
        namespace_path: input.namespacePath ?? undefined,
        path: input.path ?? undefined,
        name: input.name ?? undefined,
      };
      return projectResult(() => ctx.gitlab.client.forkProject(projectIdFromArg(String(input.id)), params), {
        namespace: 'namespaceId',
      });
    },
  }),
  projectForkRelationCreate: t.field({
    type: projectPayload('ProjectForkRelationCreate', 'Result of projectForkRelationCreate.'),
    nullable: true,
    description: 'Marks an existing project as a fork of another (owners and admins). GitLab destroys the LFS objects stored in the fork.',
    args: {
      input: t.arg({
        type: builder.inputType('ProjectForkRelationCreateInput', {
          description: 'The fork and the project it is forked from.',
          fields: (f) => ({
            id: projectIdField(f),
            forkedFromId: f.id({ required: true, description: 'Global id, numeric id or full path of the project it is forked from.' }),
          }),
        }),
        required: true,
        description: 'The fork relation.',
      }),
    },
    resolve: (_root, { input }, ctx) => {
      const id = projectIdFromArg(String(input.id));
      return projectAfter(ctx, id, () => ctx.gitlab.client.createForkRelation(id, projectIdFromArg(String(input.forkedFromId), 'forkedFromId')), {
        forked_from_id: 'forkedFromId',
      });
    },
  }),
  projectForkRelationDelete: t.field({
    type: projectPayload('ProjectForkRelationDelete', 'Result of projectForkRelationDelete.'),
    nullable: true,
    description: "Removes a project's fork relation (owners and admins).",
    args: { input: t.arg({ type: ProjectIdInput('ProjectForkRelationDeleteInput', 'The fork.'), required: true, description: 'The fork.' }) },
    resolve: (_root, { input }, ctx) => {
      const id = projectIdFromArg(String(input.id));
      return projectAfter(ctx, id, () => ctx.gitlab.client.deleteForkRelation(id));
    },
  }),
}));

// --- sharing, transfer, maintenance ------------------------------------------

builder.mutationFields((t) => ({
  projectShare: t.field({
    type: projectPayload('ProjectShare', 'Result of projectShare.'),
    nullable: true,
    description: 'Shares a project with a group.',
    args: {
      input: t.arg({
        type: builder.inputType('ProjectShareInput', {
          description: 'The project, the group and the access it gets.',
          fields: (f) => ({
            id: projectIdField(f),
            groupId: f.field({ type: 'SafeInt', required: true, description: 'Numeric id of the group.' }),
            groupAccess: f.field({ type: AccessLevel, required: true, description: 'Access level the group gets.' }),
            expiresAt: f.string({ description: 'Date the share expires, as YYYY-MM-DD.' }),
          }),
        }),
        required: true,
        description: 'The share.',
      }),
    },
    resolve: (_root, { input }, ctx) => {
      if (input.expiresAt && !/^\d{4}-\d{2}-\d{2}$/.test(input.expiresAt)) {
        return { project: null, errors: [inputError('expiresAt', 'expiresAt must be a date as YYYY-MM-DD.')] };
      }
      const id = projectIdFromArg(String(input.id));
      const params = { group_id: input.groupId, group_access: input.groupAccess, expires_at: input.expiresAt ?? undefined };
      return projectAfter(ctx, id, () => ctx.gitlab.client.shareProject(id, params));
    },
  }),
  projectUnshare: t.field({
    type: projectPayload('ProjectUnshare', 'Result of projectUnshare.'),
    nullable: true,
    description: 'Stops sharing a project with a group.',
    args: {
      input: t.arg({
        type: builder.inputType('ProjectUnshareInput', {
          description: 'The project and the group.',
          fields: (f) => ({ id: projectIdField(f), groupId: f.field({ type: 'SafeInt', required: true, description: 'Numeric id of the group.' }) }),
        }),
        required: true,
        description: 'The share to remove.',
      }),
    },
    resolve: (_root, { input }, ctx) => {
      const id = projectIdFromArg(String(input.id));
      return projectAfter(ctx, id, () => ctx.gitlab.client.unshareProject(id, input.groupId));
    },
  }),
  projectTransfer: t.field({
    type: projectPayload('ProjectTransfer', 'Result of projectTransfer.'),
    nullable: true,
    description: 'Moves a project to another namespace.',
    args: {
      input: t.arg({
        type: builder.inputType('ProjectTransferInput', {
          description: 'The project and its new namespace.',
          fields: (f) => ({
            id: projectIdField(f),
            namespace: f.string({ required: true, description: 'Numeric id or full path of the target namespace.' }),
          }),
        }),
        required: true,
        description: 'The transfer.',
      }),
    },
    resolve: (_root, { input }, ctx) => {
      const namespace = /^\d+$/.test(input.namespace) ? Number(input.namespace) : input.namespace;
      return projectResult(() => ctx.gitlab.client.transferProject(projectIdFromArg(String(input.id)), namespace));
    },
  }),
  projectHousekeeping: t.field({
    type: projectPayload('ProjectHousekeeping', 'Result of projectHousekeeping.'),
    nullable: true,
    description: "Starts the housekeeping task of a project's repository.",
    args: { input: t.arg({ type: ProjectIdInput('ProjectHousekeepingInput', 'The project.'), required: true, description: 'The project.' }) },
    resolve: (_root, { input }, ctx) => {
      const id = projectIdFromArg(String(input.id));
      return projectAfter(ctx, id, () => ctx.gitlab.client.startHousekeeping(id));
    },
  }),
  projectMirrorPull: t.field({
    type: projectPayload('ProjectMirrorPull', 'Result of projectMirrorPull.'),
    nullable: true,
    description: 'Starts pulling a mirrored project from its source (paid tier).',
    args: { input: t.arg({ type: ProjectIdInput('ProjectMirrorPullInput', 'The project.'), required: true, description: 'The project.' }) },
    resolve: (_root, { input }, ctx) => {
      const id = projectIdFromArg(String(input.id));
      return projectAfter(ctx, id, () => ctx.gitlab.client.startMirrorPull(id));
    },
  }),
}));

// --- uploads ------------------------------------------------------------------

interface UploadPayloadShape {
  upload: UploadRecord | null;
  errors: UserErrorShape[];
}

const ProjectUpload = builder.objectRef<UploadRecord>('ProjectUpload').implement({
  description: 'A file uploaded to a project, ready to link from issues, merge requests or comments.',
  fields: (t) => ({
    alt: t.exposeString('alt', { description: 'Alternative text of the file (its name without extension).' }),
    url: t.exposeString('url', { description: "URL of the file, relative to the project's web URL." }),
    markdown: t.exposeString('markdown', { description: 'A ready-made markdown link to the file.' }),
    fullPath: t.string({ nullable: true, description: 'Path of the file from the server root (current GitLab only).', resolve: (u) => u.full_path ?? null }),
  }),
});

builder.mutationField('projectUpload', (t) =>
  t.field({
    type: builder.objectRef<UploadPayloadShape>('ProjectUploadPayload').implement({
      description: 'Result of projectUpload.',
      fields: (f) => ({
        upload: f.field({ type: ProjectUpload, nullable: true, description: 'The uploaded file; null when the upload failed.', resolve: (p) => p.upload }),
        errors: f.field({ type: [UserError], nullable: false, description: 'Why the upload was refused; empty on success.', resolve: (p) => p.errors }),
      }),
    }),
    nullable: true,
    description: 'Uploads a file to a project, sent with the GraphQL multipart request spec and streamed to GitLab.',
    args: {
      input: t.arg({
        type: builder.inputType('ProjectUploadInput', {
          description: 'The project and the file.',
          fields: (f) => ({ id: projectIdField(f), file: f.field({ type: 'File', required: true, description: 'The file.' }) }),
        }),
        required: true,
        description: 'The upload.',
      }),
    },
    resolve: async (_root, { input }, ctx) => {
      const { result, errors } = await runMutation(() =>
        ctx.gitlab.client.uploadFile(projectIdFromArg(String(input.id)), input.file, input.file.name || 'upload'),
      );
      return { upload: result, errors };
    },
  }),
);
