/**
 * The operator console: one HTML page at `/` and its static files at `/console/:file`. The page is
 * a browser application that works through the public API only (docs/console.md); this service
 * only hands out files, read once at start from services/gateway/console/ and from the front-end
 * packages in node_modules, by exact name (an allowlist, so no path ever reaches the file system).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Service, ServiceSchema, ServiceSettingSchema } from 'moleculer';
import { db } from '../../shared/db/client';
import { fail } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';
import type { HttpRoute } from '../../shared/http/route';
import { EXPONENT_EXCEPTIONS } from '../../shared/money';
import { repoRoot } from '../../shared/paths';
import { loadSettings } from '../../shared/settings';

export interface Asset {
  body: Buffer;
  type: string;
  /** Short content hash: the page asks for `?v=<version>`, so a cached copy is never stale. */
  version: string;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/** Front-end packages served under our own origin (operators run closed networks: no CDN). */
const VENDOR: Record<string, [pkg: string, file: string]> = {
  'preact.mjs': ['preact', 'dist/preact.mjs'],
  'preact-hooks.mjs': ['preact', 'hooks/dist/hooks.mjs'],
  'htm.mjs': ['htm', 'dist/htm.mjs'],
  'uplot.mjs': ['uplot', 'dist/uPlot.esm.js'],
  'uplot.css': ['uplot', 'dist/uPlot.min.css'],
};

/** Bare specifiers the console's modules import, resolved by the page's import map. */
const IMPORTS: Record<string, string> = {
  preact: 'preact.mjs',
  'preact/hooks': 'preact-hooks.mjs',
  htm: 'htm.mjs',
  uplot: 'uplot.mjs',
};

export const RTL_LANGUAGES = new Set(['ar', 'fa', 'he', 'ur']);
const OWN_FILE = /^[a-z][a-z0-9-]*\.(js|css)$/;

export const consoleDir = () => path.join(repoRoot(), 'services', 'gateway', 'console');

/**
 * Where npm installs a direct dependency. Not require.resolve: these packages' `exports` hide
 * their package.json and ES-module files from Node's resolver, and jest's resolver differs.
 */
function packageDir(pkg: string): string {
  return path.join(repoRoot(), 'node_modules', pkg);
}

export function assetOf(body: Buffer, name: string): Asset {
  const type = TYPES[path.extname(name)];
  if (!type) throw new Error(`console asset of unknown type: ${name}`);
  return { body, type, version: crypto.createHash('sha256').update(body).digest('hex').slice(0, 12) };
}

const asset = (file: string) => assetOf(fs.readFileSync(file), file);

/** One of a page's files by name: kept for good when asked by the version its page's URLs carry. */
export function serveAsset(assets: Map<string, Asset>, ctx: Ctx<{ file: string; v?: string }>): Buffer {
  const found = assets.get(ctx.params.file);
  if (!found) throw fail('consoleFileNotFound');
  ctx.meta.$responseHeaders = {
    'Content-Type': found.type,
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': ctx.params.v === found.version ? 'public, max-age=31536000, immutable' : 'no-cache',
  };
  return found.body;
}

/**
 * `currencies.js`, written from shared/money.ts at start: the console formats money with the same
 * table of ISO digits as the server, kept in one place, and still needs no build step.
 */
export const CURRENCIES_MODULE = 'currencies.js';
const currenciesModule = () =>
  Buffer.from(
    `/** Written by the gateway from shared/money.ts: ISO 4217 currencies whose minor unit is not 2 digits. */\n` +
      `export const EXPONENT_EXCEPTIONS = Object.freeze(${JSON.stringify(EXPONENT_EXCEPTIONS)});\n`,
  );

export function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of fs.readdirSync(consoleDir())) {
    if (OWN_FILE.test(name)) assets.set(name, asset(path.join(consoleDir(), name)));
  }
  for (const [name, [pkg, file]] of Object.entries(VENDOR)) assets.set(name, asset(path.join(packageDir(pkg), file)));
  assets.set(CURRENCIES_MODULE, assetOf(currenciesModule(), CURRENCIES_MODULE));
  return assets;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '"': '&quot;', '<': '&lt;', '>': '&gt;' };
export const escapeAttribute = (text: string) => text.replace(/[&"<>]/g, (c) => ESCAPES[c]);

export const url = (name: string, assets: Map<string, Asset>) =>
  `/console/${name}?v=${assets.get(name)?.version ?? ''}`;

/**
 * The import map names every module with its versioned URL, the bare packages and the console's
 * own files alike (a relative `./api.js` import resolves to `/console/api.js`, which the map
 * rewrites), so every file can be cached for good.
 */
export function importMap(assets: Map<string, Asset>): string {
  return JSON.stringify({ imports: importEntries(assets) });
}

/** The import map's entries, for a page that adds its own modules beside the console's (the `/my` page). */
export function importEntries(assets: Map<string, Asset>): Record<string, string> {
  const imports: Record<string, string> = {};
  for (const [specifier, name] of Object.entries(IMPORTS)) imports[specifier] = url(name, assets);
  for (const name of assets.keys())
    if (name.endsWith('.js') || name.endsWith('.mjs')) imports[`/console/${name}`] = url(name, assets);
  return imports;
}

export interface Page {
  /** The page in the operator's language, with its name (the `operator_name` setting) for the header. */
  html(language: string, operatorName: string): string;
  headers: Record<string, string>;
}

/** The page and its security headers; the CSP allows the one inline script (the import map) by hash. */
export function buildPage(assets: Map<string, Asset>): Page {
  const template = fs.readFileSync(path.join(consoleDir(), 'index.html'), 'utf8');
  const map = importMap(assets);
  const mapHash = crypto.createHash('sha256').update(map).digest('base64');
  const csp = [
    "default-src 'none'",
    `script-src 'self' 'sha256-${mapHash}'`,
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    // The PDF preview shows a blob: URL of the PDF fetched with the token.
    "frame-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
  return {
    html(language, operatorName) {
      const lang = /^[a-z]{2}$/.test(language) ? language : 'en';
      return (
        template
          .replace('{{lang}}', lang)
          .replace('{{dir}}', RTL_LANGUAGES.has(lang) ? 'rtl' : 'ltr')
          .replace('{{importmap}}', map)
          .replace('{{css}}', url('app.css', assets))
          .replace('{{uplotcss}}', url('uplot.css', assets))
          .replace('{{app}}', url('app.js', assets))
          // Last, and by a function: the name's own text is never read as a placeholder or as `$&`.
          .replace('{{operator}}', () => escapeAttribute(operatorName))
      );
    },
    headers: pageHeaders(csp),
  };
}

/** The headers of a page of ours (the console, /my): tiny and carrying the language, so always fresh. */
export function pageHeaders(csp: string): Record<string, string> {
  return {
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'Content-Security-Policy': csp,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Permissions-Policy': 'camera=(), microphone=(), geolocation=()',
  };
}

interface ConsoleThis extends Service {
  assets: Map<string, Asset>;
  page: Page;
  /** Why the console cannot be served (its files missing from an image): the API still runs. */
  unavailable?: string;
}

export const publicFile: Pick<HttpRoute, 'auth' | 'access' | 'rateLimit' | 'tag'> = {
  auth: 'public',
  access: 'none',
  rateLimit: 'none',
  tag: 'console',
};

export function createConsoleService(): ServiceSchema {
  const schema: ServiceSchema<ServiceSettingSchema, ConsoleThis> = {
    name: 'console',
    actions: {
      page: {
        rest: 'GET /',
        http: {
          ...publicFile,
          summary: 'The operator console (a browser application on this API)',
          produces: 'html',
          errors: { 503: 'The console files are not installed' },
        } satisfies HttpRoute,
        async handler(this: ConsoleThis, ctx: Ctx): Promise<string> {
          // Everyone sees the layout direction of the operator's language, not only admins (who
          // alone may read GET /api/settings), so the page carries it.
          if (this.unavailable) throw fail('consoleUnavailable', this.unavailable);
          // The operator's name too: the header shows it to every manager, not only to admins.
          const { language, operator_name } = await loadSettings(db(), ['language', 'operator_name']);
          ctx.meta.$responseHeaders = this.page.headers;
          return this.page.html(language, operator_name);
        },
      },
      asset: {
        rest: 'GET /console/:file',
        http: {
          ...publicFile,
          summary: 'A static file of the console (its modules, styles and the front-end libraries)',
          produces: 'text',
          params: {
            type: 'object',
            properties: { file: { type: 'string', pattern: '^[a-z0-9][a-z0-9.-]{0,63}$' } },
            required: ['file'],
          },
          query: { type: 'object', properties: { v: { type: 'string', maxLength: 64 } } },
          errors: { 404: 'No such console file', 503: 'The console files are not installed' },
        } satisfies HttpRoute,
        handler(this: ConsoleThis, ctx: Ctx<{ file: string; v?: string }>): Buffer {
          if (this.unavailable) throw fail('consoleUnavailable', this.unavailable);
          return serveAsset(this.assets, ctx);
        },
      },
    },
    created(this: ConsoleThis) {
      try {
        this.assets = loadAssets();
        this.page = buildPage(this.assets);
      } catch (err) {
        this.unavailable = `the console's files are missing (${consoleDir()}, preact, htm, uplot): ${(err as Error).message}`;
        this.logger.error(this.unavailable);
      }
    },
  };
  return schema as ServiceSchema;
}
