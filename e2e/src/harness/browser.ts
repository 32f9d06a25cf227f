import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium (scripts/install-test-deps.sh installs it); never a downloaded browser. */
export const CHROMIUM = process.env.VTL_CHROMIUM ?? '/usr/bin/chromium';

/** Where the console test writes its screenshots (gitignored). */
export const SCREENSHOTS = path.resolve(import.meta.dirname, '../../screenshots');

/**
 * Headless Chromium as this machine allows it: no sandbox (root), no GPU, and none of the
 * background connections a closed network refuses; Playwright gives it a fresh profile each run.
 */
export class TestBrowser {
  private constructor(readonly browser: Browser) {}

  static async launch(): Promise<TestBrowser> {
    const browser = await chromium.launch({
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
    return new TestBrowser(browser);
  }

  /** A context for one user: the appliance's certificate is self-signed. */
  context(viewport = { width: 1280, height: 800 }): Promise<BrowserContext> {
    return this.browser.newContext({ ignoreHTTPSErrors: true, viewport });
  }

  async close(): Promise<void> {
    await this.browser.close();
  }
}

/** Logs in through the console's login page and waits for the overview. */
export async function consoleLogin(page: Page, url: string, username: string, password: string) {
  await page.goto(url);
  await page.getByLabel('User').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
}

/** Opens one console page and lets its first reads land. */
export async function consoleVisit(page: Page, name: string) {
  await page.goto(`${new URL(page.url()).origin}/#/${name}`);
  await page.locator('#page-title').waitFor();
  // The event stream keeps a request open, so "network idle" never comes: give the page's GETs a moment.
  await page.waitForTimeout(700);
}
