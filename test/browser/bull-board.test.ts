/**
 * Bull Board in a real browser: Debian's Chromium (installed by `scripts/setup.sh --test`),
 * driven by playwright-core. A missing Chromium fails this test; it does not skip.
 */
import { Job } from 'bullmq';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { JOB } from '@pos/shared/queue/jobs';
import { launchChromium } from '../support/chromium';
import { adminHeader, call, sampleRows } from '../support/http';
import { startStack, useStack } from '../support/stack';
import { eventually } from '../support/wait';

describe('Bull Board in Chromium', () => {
  const stack = useStack();
  let browser: Browser;
  let boardUrl: string;

  beforeAll(async () => {
    boardUrl = `${stack.origin}/admin/queues`;
    browser = await launchChromium();
    // Work on the queue, so the board has jobs to show: one done, and one that failed for real
    // in the stack's worker (malformed data fails for good, at once).
    const location = await stack.admin.createLocation('Board');
    const { apiKey } = await stack.admin.createServiceSession(location.id, 'reg-board');
    const order = await stack.admin.createOrder(location.id, sampleRows);
    const done = await call('PUT', `${stack.baseUrl}/orders/${order.number}/statusupdate`, {
      apiKey,
      body: { newState: 'COMPLETED' },
    });
    expect(done.status).toBe(200);
    const failing = await stack.api.deps.queues.current[0]!.queue.add(JOB.sessionClose, {
      sessionId: { $ne: 'shown-on-the-board' },
    });
    await eventually(async () => (await failing.getState()) === 'failed', 'the seeded job failed');
  });
  afterAll(async () => {
    await browser?.close();
  });

  /**
   * A context that reaches only the service, recording what failed; a request to another origin
   * (Bull Board's page linked a web font's host) is refused and counts as a failure.
   */
  async function openContext(
    options: Parameters<Browser['newContext']>[0],
    origin = stack.origin,
  ): Promise<{ context: BrowserContext; page: Page; failures: string[] }> {
    const context = await browser.newContext(options);
    const failures: string[] = [];
    await context.route(
      (url) => url.origin !== origin,
      (route) => {
        failures.push(`another origin: ${route.request().url()}`);
        return route.abort();
      },
    );
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && message.text().includes('Content Security Policy'))
        failures.push(`CSP: ${message.text()}`);
    });
    page.on('response', (response) => {
      if (response.url().startsWith(origin) && response.status() >= 400)
        failures.push(`${response.status()} ${response.url()}`);
    });
    page.on('pageerror', (err) => failures.push(`page error: ${err.message}`));
    return { context, page, failures };
  }

  it('shows the transition queue to HTTP Basic credentials (any user, the token as password)', async () => {
    const { context, page, failures } = await openContext({
      httpCredentials: { username: 'admin', password: stack.env.ADMIN_TOKEN! },
    });
    try {
      const response = await page.goto(boardUrl);
      expect(response?.status()).toBe(200);
      await page.getByText('order-work').first().waitFor({ timeout: 20_000 });
      expect(await page.title()).toBe('POS order work');
      expect(failures).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('shows the transition queue to a bearer header', async () => {
    const { context, page, failures } = await openContext({ extraHTTPHeaders: adminHeader(stack.env) });
    try {
      const response = await page.goto(`${boardUrl}/queue/order-work?status=failed`);
      expect(response?.status()).toBe(200);
      await page.getByText('order-work').first().waitFor({ timeout: 20_000 });
      // the seeded failed job, with why it failed
      await page.getByText('malformed job data: /sessionId must be string').first().waitFor({ timeout: 20_000 });
      expect(failures).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('refuses the page without the token: 401 with a Basic challenge, which headless Chromium cannot answer', async () => {
    const { context, page } = await openContext({});
    try {
      // Headless Chromium has no prompt to show, so the navigation itself fails on the challenge.
      await expect(page.goto(boardUrl)).rejects.toThrow(/ERR_INVALID_AUTH_CREDENTIALS/);
      // The same request from a page of the service, without credentials: the 401 itself.
      const second = await context.newPage();
      expect((await second.goto(`${stack.origin}/healthz`))?.status()).toBe(200);
      const refused = await second.evaluate(async (url) => {
        const response = await fetch(url, { credentials: 'omit' });
        return {
          status: response.status,
          challenge: response.headers.get('www-authenticate'),
          body: await response.text(),
        };
      }, boardUrl);
      expect(refused.status).toBe(401);
      expect(refused.challenge).toBe('Basic realm="pos-admin"');
      expect(refused.body).not.toContain('order-work');
    } finally {
      await context.close();
    }
  });

  it('refuses a wrong password with 401', async () => {
    const { context, page } = await openContext({ httpCredentials: { username: 'admin', password: 'not-the-token' } });
    try {
      const response = await page.goto(boardUrl);
      expect(response?.status()).toBe(401);
      expect(response?.headers()['www-authenticate']).toBe('Basic realm="pos-admin"');
      expect(await page.content()).toContain('A valid admin token is required');
      expect(await page.content()).not.toContain('order-work');
    } finally {
      await context.close();
    }
  });
  describe('writable (BULL_BOARD_WRITABLE=1)', () => {
    let writable: Awaited<ReturnType<typeof startStack>>;
    beforeAll(async () => {
      writable = await startStack({ BULL_BOARD_WRITABLE: '1' });
    });
    afterAll(() => writable?.close());

    it("retries a failed job from the board's own page (its requests pass the cross-site check)", async () => {
      const queue = writable.api.deps.queues.current[0]!.queue;
      const failing = await queue.add(JOB.sessionClose, { sessionId: { $ne: 'retried-from-the-page' } });
      const attempts = async () =>
        (await failing.getState()) === 'failed' ? (await Job.fromId(queue, failing.id!))!.attemptsMade : 0;
      await eventually(async () => (await attempts()) === 1, 'the seeded job failed');
      const { context, page, failures } = await openContext(
        { httpCredentials: { username: 'admin', password: writable.env.ADMIN_TOKEN! } },
        writable.origin,
      );
      try {
        expect((await page.goto(`${writable.origin}/admin/queues/queue/order-work?status=failed`))?.status()).toBe(200);
        await page.getByText('malformed job data: /sessionId must be string').first().waitFor({ timeout: 20_000 });
        await page
          .getByRole('button', { name: /^Retry all/ })
          .first()
          .click();
        await page.getByRole('button', { name: 'Confirm' }).click();
        // run again by the worker, and failed again
        await eventually(async () => (await attempts()) === 2, 'the failed job retried', 20_000);
        expect(failures).toEqual([]);
      } finally {
        await context.close();
      }
    });
  });
});
