/** The literal path segments of the GitLab calls the client makes: kept in metrics' route templates (http.ts routeTemplate). */
export const GITLAB_ROUTE_WORDS: readonly string[] = [
  'projects', 'user', 'users', 'version', 'fork', 'forks', 'hooks', 'housekeeping', 'jobs', 'artifacts', 'keep',
  'trace', 'languages', 'mirror', 'pull', 'pipelines', 'push_rule', 'share', 'transfer', 'uploads', 'archive',
  'unarchive', 'star', 'unstar', 'snapshot', 'cancel', 'retry', 'play', 'erase', 'raw', 'download',
];
