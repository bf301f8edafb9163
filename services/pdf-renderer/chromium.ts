/**
 * Which Chromium the renderer drives: `CHROMIUM_PATH`, else Debian's `/usr/bin/chromium`, else the
 * browser `npx playwright install chromium` would have put in Playwright's cache. Nothing is ever
 * downloaded at run time: a missing browser is a start-up error that names the fix.
 */
import fs from 'node:fs';
import { chromium } from 'playwright-core';

export const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/** Flags measured to work in containers on these machines (ARCHITECTURE section 8). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export class ChromiumNotFoundError extends Error {
  constructor(tried: string[]) {
    super(
      `pdf-renderer: no Chromium found (tried ${tried.join(', ')}). ` +
        'Install one (Debian/Ubuntu: apt-get install -y chromium) or set CHROMIUM_PATH to a Chromium or Chrome executable.',
    );
    this.name = 'ChromiumNotFoundError';
  }
}

function playwrightOwn(): string | undefined {
  try {
    return chromium.executablePath();
  } catch {
    // playwright-core throws when it has no browser registry entry for this platform.
    return undefined;
  }
}

export function findChromium(
  env: NodeJS.ProcessEnv = process.env,
  exists: (p: string) => boolean = fs.existsSync,
): string {
  const explicit = env.CHROMIUM_PATH?.trim();
  if (explicit) {
    // An explicit path that is wrong is a mistake to report, not a reason to fall back silently.
    if (!exists(explicit)) throw new ChromiumNotFoundError([`CHROMIUM_PATH=${explicit}`]);
    return explicit;
  }
  const candidates = [DEBIAN_CHROMIUM, playwrightOwn()].filter((p): p is string => !!p);
  const found = candidates.find((p) => exists(p));
  if (!found) throw new ChromiumNotFoundError(['CHROMIUM_PATH (unset)', ...candidates]);
  return found;
}
