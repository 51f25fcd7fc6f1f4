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
/**
 * How long a check waits for the page: as long as the test may run. A 9 MB page in Chromium under three
 * suites at once on two cores took over 30 s to show its Run button; the page decides, not a deadline.
 */
const LOADED = { timeout: 240_000, interval: 100 };

const foreign: string[] = [];

/** The network is closed: anything not served by the gateway itself is refused, and recorded. */
async function blockForeign(): Promise<void> {
  await browser.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.origin === t.url.origin) return route.continue();
    foreign.push(url.href);
    return route.abort();
  });
}

/**
 * Opens GraphiQL as a first visit: the tabs earlier pages kept in localStorage
 * are cleared from a page of the same origin that is not GraphiQL, which
 * would write its own state back as it unloads.
 */
async function firstVisit(page: Page): Promise<void> {
  await page.goto(new URL('/healthz', t.url).href);
  await page.evaluate(() => localStorage.clear());
  await page.goto(t.url.href);
}

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
      app: { graphiqlHeaders: { 'Private-Token': 'demo-token', 'X-Hubzilla-Authorization': `Basic ${Buffer.from('demo:demo-pass').toString('base64')}` } },
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
        // A desktop browser's cache size: a fresh headless profile's is too small to keep a 2 MB page.
        '--disk-cache-size=268435456',
      ],
    });
    // No deadline of Playwright's own (30 s by default): each check waits for the page, the test's timeout bounds it.
    browser.setDefaultTimeout(0);
    browser.setDefaultNavigationTimeout(0);
    await blockForeign();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await t?.close();
  });

  it('loads compressed, answers its revalidation with a 304, and holds no demo hint in front of real servers', async () => {
    // Routing requests turns Chromium's HTTP cache off: for this test, foreign requests are only recorded (the network is closed anyway).
    await browser.unroute('**/*');
    const page = await browser.newPage();
    page.on('request', (request) => {
      if (new URL(request.url()).origin !== t.url.origin) foreign.push(request.url());
    });
    // What went over the wire, as Chromium's network panel counts it (encodedDataLength: headers and body as sent).
    const transfers: { status: number; bytes: number; encoding: string | undefined }[] = [];
    const documents = new Map<string, { status: number; encoding: string | undefined }>();
    const cdp = await browser.newCDPSession(page);
    await cdp.send('Network.enable');
    cdp.on('Network.responseReceived', (event) => {
      if (event.type !== 'Document') return;
      const headers = Object.fromEntries(Object.entries(event.response.headers).map(([k, v]) => [k.toLowerCase(), String(v)]));
      documents.set(event.requestId, { status: event.response.status, encoding: headers['content-encoding'] });
    });
    cdp.on('Network.loadingFinished', (event) => {
      const document = documents.get(event.requestId);
      if (document) transfers.push({ ...document, bytes: event.encodedDataLength });
    });
    await page.goto(t.url.href);
    await page.locator('.graphiql-execute-button').waitFor({ timeout: 0 });
    // Coming back to the page: Chromium revalidates it with its ETag (no-cache).
    await page.goto('about:blank');
    await page.goto(t.url.href);
    await page.locator('.graphiql-execute-button').waitFor({ timeout: 0 });
    await expect.poll(() => transfers.length, LOADED).toBe(2);
    const [first, again] = transfers;
    console.log(`GraphiQL page in Chromium: first load ${first?.bytes} bytes (${first?.encoding}), coming back ${again?.bytes} bytes (HTTP ${again?.status})`);
    // The page is 9.1 MB as HTML.
    expect(first).toMatchObject({ status: 200, encoding: 'br' });
    expect(first?.bytes).toBeLessThan(3_000_000);
    expect(again?.bytes).toBeLessThan(3_000_000);
    // Revalidation by its ETag costs no body. (Headless Chromium did not revalidate this page in our runs; a 304 is what a client that does gets.)
    const etag = (await fetch(t.url, { headers: { accept: 'text/html', 'accept-encoding': 'br' } })).headers.get('etag') ?? '';
    const revalidated = await fetch(t.url, { headers: { accept: 'text/html', 'accept-encoding': 'br', 'if-none-match': etag } });
    expect(revalidated.status).toBe(304);
    expect((await revalidated.arrayBuffer()).byteLength).toBe(0);
    expect(foreign).toEqual([]);
    await page.close();
    await blockForeign();

    // In front of real servers there are no demo credentials, and the page does not pretend there are.
    const plain = await fetch(t.url, { headers: { accept: 'text/html', 'accept-encoding': 'gzip' } });
    expect(plain.headers.get('content-encoding')).toBe('gzip');
    expect(await plain.text()).toContain('demo credentials are already in the headers');
    const real = await createTestApp({ sandbox: { clock: 'manual' } });
    try {
      const html = await (await fetch(real.url, { headers: { accept: 'text/html' } })).text();
      expect(html).toContain('Put your credentials in the headers below');
      expect(html).not.toContain('demo-token');
      expect(html).not.toContain('demo credentials are already in the headers');
    } finally {
      await real.close();
    }
  }, 300_000);

  it('shows the six example tabs, and runs each example: GitLab, CI pipelines, Hubzilla, a mutation and two live subscriptions', async () => {
    const page = await browser.newPage();
    await firstVisit(page);
    await page.locator('.graphiql-execute-button').waitFor({ timeout: 0 });
    const names = (await page.locator('.graphiql-tab').allInnerTexts()).map((text) => text.trim());
    expect(names).toEqual(
      expect.arrayContaining(['ProjectsWithJobs', 'RecentPipelines', 'ChannelStream', 'StarPlayground', 'WatchPlaygroundJobs', 'FollowJobLog']),
    );
    await page.close();
    // Each example as GraphiQL opens it from a link. (Switching tabs by a click leaves headless
    // Chromium's editor view on the previous tab, so the tab's own Run cannot be driven here.)
    const { graphiqlTabs } = await import('../../src/server/graphiql.js');
    const examples = graphiqlTabs({ 'Private-Token': 'demo-token' });
    for (const [example, expected] of [
      [examples[0], '"pathWithNamespace"'],
      [examples[1], '"gid://duograph/Pipeline/'],
      [examples[2], '"nickname": "demo"'],
      [examples[3], '"changed"'],
      [examples[4], '"jobStatusUpdated"'],
      // The log tab shows the log itself: the running job's last lines.
      [examples[5], 'rspec: step'],
    ] as const) {
      const view = await browser.newPage();
      await view.goto(`${t.url.href}?query=${encodeURIComponent(example?.query ?? '')}`);
      await view.locator('.graphiql-execute-button').waitFor({ timeout: 0 });
      await view.locator('.graphiql-execute-button').click();
      await expect.poll(() => responseText(view), LOADED).toContain(expected);
      // No GraphQL error (a payload's own empty `errors` list sits deeper).
      expect(await responseText(view)).not.toMatch(/\n {2}"errors"/);
      await view.close();
    }
    expect(foreign).toEqual([]);
  }, 600_000);

  it('loads from the gateway alone, runs the example query and shows the data', async () => {
    const page = await browser.newPage();
    await firstVisit(page);
    await page.locator('.graphiql-execute-button').waitFor({ timeout: 0 });
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText.
    await expect.poll(() => page.locator('.graphiql-query-editor').innerText(), LOADED).toContain('ProjectsWithJobs');
    const answered = page.waitForResponse(
      (r) => r.url().startsWith(t.url.href) && r.request().method() === 'POST' && (r.request().postData() ?? '').includes('query ProjectsWithJobs'),
    );
    await page.locator('.graphiql-execute-button').click();
    const response = await answered;
    const body = (await response.json()) as { data?: { projects: { totalCount: number; nodes: { pathWithNamespace: string }[] } } };
    expect(body.data?.projects.nodes).toHaveLength(5);
    // The demo token from the headers editor reached GitLab.
    expect(t.calls({ path: '/api/v4/projects' }).at(-1)?.headers['private-token']).toBe('demo-token');
    const first = body.data?.projects.nodes[0]?.pathWithNamespace ?? '';
    await expect.poll(() => responseText(page), LOADED).toContain(`"pathWithNamespace": "${first}"`);
    expect(await responseText(page)).toContain(`"totalCount": ${body.data?.projects.totalCount}`);
    expect(foreign).toEqual([]);
    await page.close();
  }, 300_000);

  it('runs a subscription whose result updates live', async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url.href}?query=${encodeURIComponent(SUBSCRIPTION)}`);
    await page.locator('.graphiql-execute-button').waitFor({ timeout: 0 });
    await page.locator('.graphiql-execute-button').click();
    await expect.poll(() => responseText(page), LOADED).toContain('"status": "PENDING"');
    t.sandbox.advance(STEP_MS);
    await expect.poll(() => responseText(page), LOADED).toContain('"status": "RUNNING"');
    t.sandbox.advance(STEP_MS);
    await expect.poll(() => responseText(page), LOADED).toContain('"status": "FAILED"');
    expect(await responseText(page)).toContain('"name": "rubocop"');
    // Stop the subscription from the page, as a user would.
    await page.locator('.graphiql-execute-button').click();
    expect(foreign).toEqual([]);
    await page.close();
  }, 300_000);
});
