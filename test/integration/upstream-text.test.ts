/**
 * What GitLab writes reaches a caller only scrubbed and bounded: mutation
 * payload errors built from a 400 or 409 body lose token-shaped strings as
 * the top-level error and the logs do, and a message nesting 50,000 levels
 * is as short an error as any other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

const TOKEN = 'glpat-SCRUBMEplease0123456789';
const CREATE = 'mutation { pipelineCreate(input: { projectId: "7", ref: "main" }) { pipeline { id } errors { message field code } } }';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

function refuse(status: number, body: unknown): void {
  t.sandbox.clearFaults();
  t.sandbox.addFault({
    method: 'POST',
    path: '/api/v4/projects/7/pipeline',
    status,
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
}

describe('GitLab text in mutation payloads', () => {
  it.each([
    [400, { message: { base: [`token ${TOKEN} is not allowed`] } }],
    [400, { error: `ref ${TOKEN} is invalid` }],
    [409, { message: { ref: [`${TOKEN} already exists`] } }],
    [403, { message: `403 Forbidden - ${TOKEN}` }],
  ])('scrubs a token out of a %i answer', async (status, body) => {
    refuse(status, body);
    const res = await t.gql<{ pipelineCreate: { errors: { message: string }[] } }>(CREATE);
    expect(res.errors).toBeUndefined();
    const messages = res.data?.pipelineCreate.errors.map((e) => e.message) ?? [];
    expect(messages.length).toBeGreaterThan(0);
    expect(messages.join(' ')).toContain('[Redacted]');
    expect(JSON.stringify(res)).not.toContain(TOKEN);
  });

  it('answers a 400 whose message nests 50,000 levels with a short error, and keeps the rest of the answer', async () => {
    let deep = '"bottom"';
    for (let i = 0; i < 50_000; i++) deep = `{"a":${deep}}`;
    for (const body of [`{"message":${deep}}`, `{"error":${deep}}`, `{"message":{"base":${deep}}}`]) {
      t.sandbox.clearFaults();
      t.sandbox.addFault({ method: 'POST', path: '/api/v4/projects/7/pipeline', status: 400, body, headers: { 'content-type': 'application/json' } });
      const res = await t.gql<{ pipelineCreate: { errors: { message: string; code: string }[] }; project: { name: string } }>(
        'mutation { pipelineCreate(input: { projectId: "7", ref: "main" }) { errors { message code } } }',
      );
      expect(res.status).toBe(200);
      expect(res.errors).toBeUndefined();
      const errors = res.data?.pipelineCreate.errors ?? [];
      expect(errors.length).toBeGreaterThan(0);
      expect(errors.length).toBeLessThanOrEqual(50);
      for (const error of errors) expect(error.message.length).toBeLessThanOrEqual(300);
    }
    // The top-level error of a read gets the same bounded text.
    t.sandbox.clearFaults();
    t.sandbox.addFault({ path: '/api/v4/projects/7', status: 400, body: `{"message":${deep}}`, headers: { 'content-type': 'application/json' } });
    const read = await t.gql('{ a: project(id: "5") { name } b: project(id: "7") { name } }');
    expect(read.data).toEqual({ a: { name: 'Website' }, b: null });
    expect(read.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(read.errors?.[0]?.message.length).toBeLessThan(400);
    t.sandbox.clearFaults();
  });
});
