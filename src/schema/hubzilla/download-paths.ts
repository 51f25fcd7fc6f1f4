/**
 * Where the gateway serves Hubzilla files: one route shared by the schema
 * (ChannelFile.downloadUrl) and the server (src/server/hubzilla-downloads.ts).
 */

/** Prefix of the Hubzilla file route: `/downloads/hubzilla/files/<hash>?channel=<nickname>`. */
export const HUBZILLA_DOWNLOAD_PREFIX = '/downloads/hubzilla/files';

/** The gateway path that streams a file of a channel (the login's default channel when null). */
export function hubzillaFilePath(hash: string, channel: string | null): string {
  const query = channel ? `?channel=${encodeURIComponent(channel)}` : '';
  return `${HUBZILLA_DOWNLOAD_PREFIX}/${encodeURIComponent(hash)}${query}`;
}
