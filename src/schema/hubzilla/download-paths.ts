/**
 * Where the gateway serves Hubzilla files and photos: routes shared by the
 * schema (ChannelFile.downloadUrl, PhotoScale.downloadUrl) and the server
 * (src/server/hubzilla-downloads.ts).
 */

/** Prefix of the Hubzilla file route: `/downloads/hubzilla/files/<hash>?channel=<nickname>`. */
export const HUBZILLA_DOWNLOAD_PREFIX = '/downloads/hubzilla/files';

/** The gateway path that streams a file of a channel (the login's default channel when null). */
export function hubzillaFilePath(hash: string, channel: string | null): string {
  const query = channel ? `?channel=${encodeURIComponent(channel)}` : '';
  return `${HUBZILLA_DOWNLOAD_PREFIX}/${encodeURIComponent(hash)}${query}`;
}

/** Prefix of the Hubzilla photo route: `/downloads/hubzilla/photos/<resource id>/<scale>?channel=<nickname>`. */
export const HUBZILLA_PHOTO_PREFIX = '/downloads/hubzilla/photos';

/** The gateway path that serves one scale of a photo of a channel (the login's default channel when null). */
export function hubzillaPhotoPath(resourceId: string, scale: number, channel: string | null): string {
  const query = channel ? `?channel=${encodeURIComponent(channel)}` : '';
  return `${HUBZILLA_PHOTO_PREFIX}/${encodeURIComponent(resourceId)}/${scale}${query}`;
}
