/**
 * `/docs` in a real browser (Debian's Chromium, as the Bull Board test): Swagger UI renders the
 * service's OpenAPI document from files this node serves, asking no other host for anything.
 */
import { Browser } from 'playwright-core';
import { OPERATIONS } from '@pos/shared/openapi/operations';
import { launchChromium } from '../support/chromium';
import { useStack } from '../support/stack';

describe('/docs in Chromium', () => {
  const stack = useStack();
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('renders every operation of the document, with nothing fetched from elsewhere', async () => {
    const context = await browser.newContext();
    const elsewhere: string[] = [];
    const failures: string[] = [];
    await context.route(
      (url) => url.origin !== stack.origin,
      (route) => {
        elsewhere.push(route.request().url());
        return route.abort();
      },
    );
    const page = await context.newPage();
    page.on('response', (response) => {
      if (response.status() >= 400) failures.push(`${response.status()} ${response.url()}`);
    });
    page.on('pageerror', (err) => failures.push(`page error: ${err.message}`));
    try {
      expect((await page.goto(`${stack.origin}/docs`))?.status()).toBe(200);
      await page.getByText('POS ordering service').first().waitFor({ timeout: 30_000 });
      await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
      // each operation of the document is a block: its method and path
      const blocks = await page.locator('.opblock-summary-path').allTextContents();
      expect(blocks.map((text) => text.replace(/\u200b/g, ''))).toEqual(
        expect.arrayContaining([
          '/api/v1/orders/location',
          '/api/v1/orders/{number}/statusupdate',
          '/api/v1/notifications/service/stream',
          '/admin/v1/sessions/{sessionId}/rotate-key',
        ]),
      );
      expect(blocks.length).toBe(OPERATIONS.length);
      expect(elsewhere).toEqual([]);
      expect(failures).toEqual([]);
      if (process.env.DOCS_SCREENSHOT) await page.screenshot({ path: process.env.DOCS_SCREENSHOT, fullPage: false });
    } finally {
      await context.close();
    }
  });
});
