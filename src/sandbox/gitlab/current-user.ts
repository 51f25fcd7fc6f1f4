/**
 * Who a credential is, as GitLab answers it:
 * - GET /user (lib/api/users.rb): the token's user as API::Entities::UserPublic
 *   (User and UserBasic, plus the account fields only its owner sees); 401
 *   without a token. With Sudo, the impersonated user.
 * - GET /job (lib/api/ci/jobs.rb, `authenticate_job!`): the job a CI job
 *   token belongs to, as API::Entities::Ci::Job, its `user` the one GitLab's
 *   rate limits count the token against; 401 without a valid job token.
 */
import { Params } from './params.js';
import { type RouteHandler, UNAUTHORIZED } from './api-request.js';
import { jobRecord, jobUserRecord } from './job-records.js';
import { formatTime } from './project-records.js';

export const getCurrentUser: RouteHandler = (request) => {
  const user = request.viewer;
  if (!user) return UNAUTHORIZED;
  return {
    status: 200,
    body: {
      ...jobUserRecord(user),
      followers: 0,
      following: 0,
      bio_html: '',
      last_sign_in_at: formatTime(user.createdAt),
      confirmed_at: formatTime(user.createdAt),
      last_activity_on: null,
      email: `${user.username}@sandbox.test`,
      theme_id: 1,
      color_scheme_id: 1,
      projects_limit: 100_000,
      current_sign_in_at: null,
      identities: [],
      can_create_group: true,
      can_create_project: true,
      two_factor_enabled: false,
      external: false,
      private_profile: false,
      commit_email: `${user.username}@sandbox.test`,
      ...(user.admin ? { is_admin: true, note: null, namespace_id: user.namespaceId } : {}),
    },
  };
};

export const getJobOfToken: RouteHandler = (request) => {
  const token = request.headers['job-token'] ?? new Params(request.input).string('job_token');
  const record = token === undefined ? undefined : request.store.jobTokens.get(token);
  const job = record && request.store.jobs.get(record.jobId);
  const user = job && request.store.users.get(job.userId);
  if (!job || user?.state !== 'active') return UNAUTHORIZED;
  return { status: 200, body: jobRecord(request.store, user, job) };
};
