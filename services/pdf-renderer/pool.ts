/**
 * One warm Chromium and a fixed set of reused pages. `setContent` on a warm page is about 5x faster
 * than a new page per render (ARCHITECTURE section 6), so pages live as long as their browser.
 *
 * - At most `concurrency` renders run; at most `maxQueue` more wait; beyond that `QueueFullError`
 *   (the service answers 503) so a burst cannot exhaust memory.
 * - Every render has a deadline. A page that misses it is thrown away; if the browser does not even
 *   answer when asked to close that page, the browser is considered hung and is restarted.
 * - When the browser dies (crash, OOM kill) it is relaunched; a render interrupted by the death is
 *   retried once on the new browser, so the caller only sees the failure if it happens twice.
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM_ARGS } from './chromium';
import { PoolClosedError, QueueFullError, RenderTimeoutError } from './errors';
import { browserPidsOf } from './processes';
import type { PoolStatus, RenderJob } from './worker-protocol';

export interface PoolOptions {
  executablePath: string;
  concurrency: number;
  maxQueue: number;
  timeoutMs: number;
  /** Closing a page or a browser that does not answer within this is treated as a hang. */
  closeGraceMs: number;
  logger?: { info(...args: unknown[]): void; warn(...args: unknown[]): void };
  /** Called after anything `status()` reports has changed (the worker posts it to the main thread). */
  onChange?: () => void;
}

interface Slot {
  page?: Page;
  /** The browser the page belongs to: a page of a replaced browser is never reused. */
  browser?: Browser;
  viewportWidth?: number;
  /** The render using the slot: one abandoned at its deadline must not write to it afterwards. */
  owner?: Attempt;
}

/** One render's try: the browser it reached, if any. */
interface Attempt {
  browser?: Browser;
}

const PX_PER_MM = 96 / 25.4;
/** A receipt's measured height gets this much slack so rounding never spills onto a second page. */
const RECEIPT_SLACK_MM = 2;

function withTimeout<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  // The losing promise may still reject later; observe it so it is never an unhandled rejection.
  work.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/**
 * Anything that can make the document fetch or decode something after it is parsed: an element
 * source (img, script, iframe, srcset, even a data: URL, which decodes asynchronously), a stylesheet
 * link, a CSS url() or @import. Deliberately broad: a false positive only costs the wait for 'load'.
 */
const SUBRESOURCE = /\b(src|srcset|poster|data)\s*=|<link\b|url\s*\(|@import/i;

/**
 * setContent writes the HTML synchronously, so a document with nothing to fetch is complete as soon
 * as it is committed; waiting for 'load' on top only added lifecycle round trips. A document that
 * does fetch (an operator logo) must wait for 'load' or the PDF would be printed without it.
 */
function waitUntilFor(html: string): 'commit' | 'load' {
  return SUBRESOURCE.test(html) ? 'load' : 'commit';
}

function looksLikeBrowserDeath(err: unknown): boolean {
  return /closed|crash|disconnected|Target.*gone/i.test((err as Error)?.message ?? '');
}

export class RenderPool {
  private browser?: Browser;
  private browserPid?: number;
  private launching?: Promise<Browser>;
  private generation = 0;
  private restarts = 0;
  private readonly free: Slot[];
  private readonly waiters: Array<{ resolve: (slot: Slot) => void; reject: (err: Error) => void }> = [];
  private closed = false;

  constructor(private readonly opts: PoolOptions) {
    this.free = Array.from({ length: opts.concurrency }, () => ({}));
  }

  /** Launches the browser; start-up does not wait for it (the first render does). */
  warm(): void {
    this.ensureBrowser().catch((err) => this.opts.logger?.warn('pdf-renderer: browser launch failed', err));
  }

  status(): PoolStatus {
    return {
      pid: this.browserPid,
      generation: this.generation,
      restarts: this.restarts,
      concurrency: this.opts.concurrency,
      idle: this.free.length,
      queued: this.waiters.length,
    };
  }

  async render(job: RenderJob): Promise<Buffer> {
    if (this.closed) throw new PoolClosedError();
    const slot = await this.acquire();
    try {
      return await this.renderOn(slot, job, true);
    } finally {
      this.release(slot);
    }
  }

  async stop(): Promise<void> {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w.reject(new PoolClosedError());
    this.opts.onChange?.();
    await this.launching?.catch(() => undefined);
    const browser = this.browser;
    this.browser = undefined;
    if (browser) await this.closeBrowser(browser, this.browserPid);
  }

  // ------------------------------------------------------------------ queue

  private acquire(): Promise<Slot> {
    const slot = this.free.pop();
    if (slot) {
      this.opts.onChange?.();
      return Promise.resolve(slot);
    }
    if (this.waiters.length >= this.opts.maxQueue) return Promise.reject(new QueueFullError());
    const waiting = new Promise<Slot>((resolve, reject) => this.waiters.push({ resolve, reject }));
    this.opts.onChange?.();
    return waiting;
  }

  private release(slot: Slot): void {
    const next = this.waiters.shift();
    if (next) next.resolve(slot);
    else this.free.push(slot);
    this.opts.onChange?.();
  }

  // ------------------------------------------------------------------ rendering

  private async renderOn(slot: Slot, job: RenderJob, mayRetry: boolean): Promise<Buffer> {
    const attempt: Attempt = {};
    slot.owner = attempt;
    try {
      return await withTimeout(
        this.renderPage(slot, job, attempt),
        this.opts.timeoutMs,
        () => new RenderTimeoutError(this.opts.timeoutMs),
      );
    } catch (err) {
      if (this.closed) throw new PoolClosedError();
      if (err instanceof RenderTimeoutError) {
        // A browser reached that gave no page in a whole deadline did not even open one: it is hung.
        // (None reached: its launch took the deadline, and the launch has a timeout of its own.)
        if (attempt.browser && slot.browser !== attempt.browser) await this.restartHungBrowser(attempt.browser);
        else await this.discardPage(slot);
        throw err;
      }
      const died = !this.browser?.isConnected() || looksLikeBrowserDeath(err);
      await this.discardPage(slot);
      if (died && mayRetry) {
        this.opts.logger?.warn(
          'pdf-renderer: render interrupted by a browser failure, retrying once',
          (err as Error).message,
        );
        return this.renderOn(slot, job, false);
      }
      throw err;
    }
  }

  private async renderPage(slot: Slot, job: RenderJob, attempt: Attempt): Promise<Buffer> {
    const page = await this.pageFor(slot, attempt);
    const widthPx = Math.round(job.widthMm * PX_PER_MM);
    if (slot.viewportWidth !== widthPx) {
      // Receipt heights are measured on the layout, so lay out at the paper's width. The height is
      // 1 px because nobody looks at the screen: Chromium rasterises and composites the visible
      // viewport after every setContent, and at 800 px that was about a third of a render's CPU.
      // Print layout uses the paper size, and the receipt measurement reads the document's own
      // height, so neither depends on the viewport's height.
      await page.setViewportSize({ width: widthPx, height: 1 });
      if (slot.owner === attempt) slot.viewportWidth = widthPx;
    }
    // No timeout of its own: the render's deadline (renderOn) governs. With the same timeout here,
    // Playwright's timer could fire first and its TimeoutError escaped the hung-browser handling.
    await page.setContent(job.html, { waitUntil: waitUntilFor(job.html), timeout: 0 });
    let heightMm = job.heightMm;
    if (heightMm === null) {
      const px = Number(await page.evaluate('Math.ceil(document.documentElement.getBoundingClientRect().height)'));
      heightMm = Math.ceil(px / PX_PER_MM) + RECEIPT_SLACK_MM;
    }
    // Whole CSS pixels: Chromium rounds to them anyway, and Letter (816 x 1056 px) then comes out exact.
    return page.pdf({
      width: `${widthPx}px`,
      height: `${Math.round(heightMm * PX_PER_MM)}px`,
      printBackground: true,
      margin: { top: '0', right: '0', bottom: '0', left: '0' },
    });
  }

  private async pageFor(slot: Slot, attempt: Attempt): Promise<Page> {
    const browser = await this.ensureBrowser();
    attempt.browser = browser;
    if (slot.page && slot.browser === browser && !slot.page.isClosed()) return slot.page;
    const page = await browser.newPage();
    // Templates style print with @media print; the receipt height is measured in the same media.
    await page.emulateMedia({ media: 'print' });
    // The network is off (docs/security.md): a document renders from what it carries (the logo is
    // kept as a data: URL), so no HTML, whoever wrote it, makes the renderer reach a host.
    await page.route(
      (url) => url.protocol !== 'data:',
      (route) => route.abort('blockedbyclient'),
    );
    if (slot.owner !== attempt) {
      // Opened after this render's deadline, by a browser that woke up: another render has the slot.
      void page.close().catch(() => undefined);
      throw new RenderTimeoutError(this.opts.timeoutMs);
    }
    slot.page = page;
    slot.browser = browser;
    slot.viewportWidth = undefined;
    return page;
  }

  /** Throw a page away after a failure; a page that will not even close means a hung browser. */
  private async discardPage(slot: Slot): Promise<void> {
    const { page, browser } = slot;
    slot.page = undefined;
    slot.browser = undefined;
    slot.viewportWidth = undefined;
    if (!page || !browser || browser !== this.browser || page.isClosed()) return;
    try {
      await withTimeout(
        page.close({ runBeforeUnload: false }),
        this.opts.closeGraceMs,
        () => new Error('page close timed out'),
      );
    } catch {
      await this.restartHungBrowser(browser);
    }
  }

  /**
   * Closes `hung` if it is still the running browser; the next render launches another. Renders
   * that time out later on the same hung browser find it replaced and leave the new one alone.
   */
  private async restartHungBrowser(hung: Browser): Promise<void> {
    if (this.browser !== hung) return;
    const pid = this.browserPid;
    this.opts.logger?.warn('pdf-renderer: browser is not answering, restarting it');
    this.browser = undefined;
    this.browserPid = undefined;
    this.opts.onChange?.();
    // The successor starts at once, as after a crash, while the hung one has its grace to close:
    // the next render does not wait for both.
    if (!this.closed) this.warm();
    await this.closeBrowser(hung, pid);
  }

  // ------------------------------------------------------------------ browser lifecycle

  private ensureBrowser(): Promise<Browser> {
    if (this.closed) return Promise.reject(new PoolClosedError());
    if (this.browser?.isConnected()) return Promise.resolve(this.browser);
    this.launching ??= this.launch().finally(() => {
      this.launching = undefined;
    });
    return this.launching;
  }

  private async launch(): Promise<Browser> {
    const before = new Set(browserPidsOf(process.pid));
    const browser = await chromium.launch({
      executablePath: this.opts.executablePath,
      args: CHROMIUM_ARGS,
      headless: true,
      // The renderer is a library inside a Moleculer process: the broker handles signals.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
    if (this.generation > 0) this.restarts++;
    this.generation++;
    this.browser = browser;
    this.browserPid = browserPidsOf(process.pid).find((pid) => !before.has(pid));
    this.opts.onChange?.();
    browser.on('disconnected', () => {
      if (this.browser !== browser) return;
      this.browser = undefined;
      this.browserPid = undefined;
      this.opts.onChange?.();
      if (this.closed) return;
      this.opts.logger?.warn('pdf-renderer: browser disconnected, relaunching');
      this.warm();
    });
    this.opts.logger?.info(`pdf-renderer: browser ${browser.version()} started (pid ${this.browserPid ?? 'unknown'})`);
    return browser;
  }

  /** Close politely; if the browser is hung, kill its process so it cannot linger. */
  private async closeBrowser(browser: Browser, pid: number | undefined): Promise<void> {
    try {
      await withTimeout(browser.close(), this.opts.closeGraceMs, () => new Error('browser close timed out'));
    } catch {
      if (pid) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    }
  }
}
