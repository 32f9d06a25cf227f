import path from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

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
