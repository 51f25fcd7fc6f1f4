/** What every endpoint handler receives once the caller is logged in. */
import type { ChannelRow } from './records.js';
import type { ApiResult } from './reply.js';
import type { RequestParams } from './request-params.js';
import type { Store } from './store.js';

export interface ApiContext {
  store: Store;
  /** The channel `api_user()` selected (login channel or `?channel=`). */
  channel: ChannelRow;
  /** `$_REQUEST` and `$_FILES`. */
  params: RequestParams;
  /** Upper-case HTTP method: the real hub ignores it except on a few endpoints. */
  method: string;
}

export type ApiHandler = (ctx: ApiContext) => ApiResult;
