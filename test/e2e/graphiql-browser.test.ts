/**
 * GraphiQL in a real browser: Debian's Chromium driven by playwright-core
 * loads GraphiQL from the gateway itself (every request to another origin
 * is refused and recorded: the bundle must not need a CDN), runs the example
 * query and shows its data, then runs a subscription whose result updates
 * live as the sandbox's clock moves the job along.
 *
 * Skips only where /usr/bin/chromium is missing and CI is unset; `.ci/run`
 * installs Chromium, so there it always runs.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STEP_MS } from '../../src/sandbox/gitlab/server.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const CHROMIUM = '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs it (apt-get install chromium)`);

const SUBSCRIPTION = `subscription WatchRubocop {
  jobStatusUpdated(projectId: "1", jobId: "1014") { restId name status }
}`;

let t: TestApp;
let browser: BrowserContext;
let profile: string;
const foreign: string[] = [];

/** The text GraphiQL's result pane shows (Monaco renders spaces as no-break spaces). */
async function responseText(page: Page): Promise<string> {
  // biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText, the text as the reader sees it, not the DOM property.
  return (await page.locator('.graphiql-response').innerText()).replace(/\u00a0/g, ' ');
}

describe.skipIf(!available)('GraphiQL in Chromium', () => {
  beforeAll(async () => {
    t = await createTestApp({
      sandbox: { clock: 'manual' },
      env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' },
      app: { graphiqlHeaders: { 'Private-Token': 'demo-token' } },
    });
    profile = mkdtempSync(join(tmpdir(), 'duograph-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    // The network is closed: anything not served by the gateway itself is refused, and recorded.
    await browser.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.origin === t.url.origin) return route.continue();
      foreign.push(url.href);
      return route.abort();
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await t?.close();
  });

  it('loads from the gateway alone, runs the example query and shows the data', async () => {
    const page = await browser.newPage();
    await page.goto(t.url.href);
    await page.locator('.graphiql-execute-button').waitFor({ timeout: 30_000 });
    const answered = page.waitForResponse(
      (r) => r.url().startsWith(t.url.href) && r.request().method() === 'POST' && (r.request().postData() ?? '').includes('query Projects'),
    );
    await page.locator('.graphiql-execute-button').click();
    const response = await answered;
    const body = (await response.json()) as { data?: { projects: { totalCount: number; nodes: { pathWithNamespace: string }[] } } };
    expect(body.data?.projects.nodes).toHaveLength(5);
    // The demo token from the headers editor reached GitLab.
    expect(t.calls({ path: '/api/v4/projects' }).at(-1)?.headers['private-token']).toBe('demo-token');
    const first = body.data?.projects.nodes[0]?.pathWithNamespace ?? '';
    await expect.poll(() => responseText(page), { timeout: 10_000 }).toContain(`"pathWithNamespace": "${first}"`);
    expect(await responseText(page)).toContain(`"totalCount": ${body.data?.projects.totalCount}`);
    expect(foreign).toEqual([]);
    await page.close();
  }, 60_000);

  it('runs a subscription whose result updates live', async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url.href}?query=${encodeURIComponent(SUBSCRIPTION)}`);
    await page.locator('.graphiql-execute-button').waitFor({ timeout: 30_000 });
    await page.locator('.graphiql-execute-button').click();
    await expect.poll(() => responseText(page), { timeout: 15_000 }).toContain('"status": "PENDING"');
    t.sandbox.advance(STEP_MS);
    await expect.poll(() => responseText(page), { timeout: 15_000 }).toContain('"status": "RUNNING"');
    t.sandbox.advance(STEP_MS);
    await expect.poll(() => responseText(page), { timeout: 15_000 }).toContain('"status": "FAILED"');
    expect(await responseText(page)).toContain('"name": "rubocop"');
    // Stop the subscription from the page, as a user would.
    await page.locator('.graphiql-execute-button').click();
    expect(foreign).toEqual([]);
    await page.close();
  }, 60_000);
});
