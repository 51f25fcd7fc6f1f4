/** A Hubzilla client whose every upstream call gets one canned answer: for feeding captured or written-down bodies through the client. */
import { HubzillaClient } from '../../src/upstreams/hubzilla/client.js';
import type { HttpClient, TextResponse } from '../../src/upstreams/http.js';

export function cannedHubzillaClient(status: number, text: string, channel: string | null = null): HubzillaClient {
  const http = {
    baseUrl: new URL('http://hub.test/api/z/1.0'),
    now: Date.now,
    text: async (): Promise<TextResponse> => ({ status, headers: {}, text, info: { name: 'hubzilla', status, method: 'GET', path: '/api/z/1.0/x' } }),
  } as unknown as HttpClient;
  return new HubzillaClient(http, { authorization: 'Basic dGVzdGVyOlRlc3QtUGFzcy0xMjM=' }, undefined, channel);
}
