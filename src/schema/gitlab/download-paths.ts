/**
 * Gateway URLs of binary resources. Binary data never travels inside JSON:
 * the schema hands out these paths, and server/downloads.ts streams them
 * from GitLab with the caller's credentials. Every segment is encoded.
 */

/** Mount point of the GitLab download routes on the gateway. */
export const GITLAB_DOWNLOAD_PREFIX = '/downloads/gitlab';

/** A gateway path for GitLab path segments, with an optional path inside an archive (`*artifact_path`). */
export function downloadPath(segments: readonly (string | number)[], innerPath?: string, query?: Record<string, string>): string {
  const encoded = segments.map((s) => encodeURIComponent(String(s)));
  const inner = innerPath === undefined ? [] : innerPath.split('/').map((s) => encodeURIComponent(s));
  const search = query ? `?${new URLSearchParams(query).toString()}` : '';
  return `${GITLAB_DOWNLOAD_PREFIX}/${[...encoded, ...inner].join('/')}${search}`;
}
