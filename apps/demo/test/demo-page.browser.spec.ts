import { jest } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { EmbeddedBackend } from './support/demo-backend.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const ARTIFACTS = fileURLToPath(new URL('./artifacts/', import.meta.url));

// Jest ignores a per-project testTimeout; this suite drives a browser, give it room.
jest.setTimeout(60_000);

/** What the page script reads of an element (the test's tsconfig has no DOM types). */
interface WithDataset {
  readonly dataset: Record<string, string | undefined>;
}

interface ShownResponse {
  status: string;
  executionId: string;
  replayed: string;
}

function shownResponses(page: Page, list: string): Promise<ShownResponse[]> {
  return page.locator(`[data-testid=${list}] li`).evaluateAll((items) =>
    items.map((li) => {
      const data = (li as unknown as WithDataset).dataset;
      return {
        status: data.status ?? '',
        executionId: data.executionId ?? '',
        replayed: data.replayed ?? '',
      };
    }),
  );
}

describe('the demo page in headless Chromium (embedded default)', () => {
  const backend = new EmbeddedBackend();
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    await backend.start();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 1100 } });
    await page.goto(`${backend.urls[0]}/`);
    await page.getByTestId('stream-state').filter({ hasText: 'live' }).waitFor();
  });

  afterAll(async () => {
    if (page) {
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: `${ARTIFACTS}demo-page.png`, fullPage: true });
    }
    await browser?.close();
    await backend.stop();
  });

  it('a double-clicked Pay sends two requests and pays once: one executionId, one replay', async () => {
    await page.getByTestId('pay').dblclick();
    await page.locator('[data-testid=pay-responses] li').nth(1).waitFor();
    const shown = await shownResponses(page, 'pay-responses');
    expect(shown.map((r) => r.status)).toEqual(['201', '201']);
    expect(new Set(shown.map((r) => r.executionId)).size).toBe(1);
    expect(shown.map((r) => r.replayed).sort()).toEqual(['false', 'true']);
    await expect(page.getByTestId('pay-summary').textContent()).resolves.toContain(
      '1 distinct executionId',
    );
    expect(backend.executions('payment-submit')).toBe(1);
  });

  it('"send 10 at once" gets ten 200s sharing one execution', async () => {
    await page.getByTestId('send-ten').click();
    await page.getByTestId('ten-summary').filter({ hasText: 'distinct' }).waitFor();
    const shown = await shownResponses(page, 'ten-responses');
    expect(shown.map((r) => r.status)).toEqual(Array(10).fill('200'));
    expect(new Set(shown.map((r) => r.executionId)).size).toBe(1);
    await expect(page.getByTestId('ten-summary').getAttribute('data-distinct')).resolves.toBe('1');
    expect(backend.executions('report-export')).toBe(1);
  });

  it('"retry after a timeout" gets the first attempt’s order back without creating a second one', async () => {
    await page.getByTestId('retry').click();
    await page
      .getByTestId('retry-summary')
      .filter({ hasText: 'attempts' })
      .waitFor({ timeout: 30_000 });
    const shown = await shownResponses(page, 'retry-responses');
    expect(shown[0]!.status).toBe('0');
    expect(shown.slice(1, -1).every((r) => r.status === '409')).toBe(true);
    expect(shown.at(-1)!.status).toBe('201');
    await expect(page.getByTestId('retry-summary').getAttribute('data-executions')).resolves.toBe(
      '1',
    );
    expect(backend.executions('order-create')).toBe(1);
  });

  it('streams the module’s decisions live into the panel', async () => {
    await page.locator('[data-testid=decisions] tr[data-outcome=replayed]').first().waitFor();
    const outcomes = await page
      .locator('[data-testid=decisions] tr')
      .evaluateAll((rows) => rows.map((row) => (row as unknown as WithDataset).dataset.outcome));
    expect(outcomes).toEqual(expect.arrayContaining(['executed', 'replayed']));
    expect(outcomes.filter((outcome) => outcome === 'executed')).toHaveLength(3);
    expect(outcomes.some((o) => o === 'joined' || o === 'shared' || o === 'cached')).toBe(true);
  });
});
