/** The literal path segments of the Hubzilla calls the client makes: kept in metrics' route templates (http.ts routeTemplate). */
export const HUBZILLA_ROUTE_WORDS: readonly string[] = [
  'channel', 'stream', 'network', 'item', 'full', 'update', 'xchan', 'files', 'filedata', 'filemeta', 'albums',
  'photos', 'group', 'group_members', 'abook', 'export', 'basic', 'list', 'verify', 'version',
];
