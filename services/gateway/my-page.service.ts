/**
 * The subscriber's page at `/my` (docs/self-care.md): one HTML page and its own files at
 * `/my/:file`, a browser application on `/api/my` only. Like the console it has no build step: its
 * modules import the console's Preact, htm, uPlot and shared modules (ui.js, format.js, i18n.js,
 * charts.js) from `/console/`, through one import map, so both pages run the same code. Files are
 * read once at start, by exact name (an allowlist, so no path ever reaches the file system).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Service, ServiceSchema, ServiceSettingSchema } from 'moleculer';
import { db } from '../../shared/db/client';
import { fail } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';
import type { HttpRoute } from '../../shared/http/route';
import { repoRoot } from '../../shared/paths';
import { loadSettings, type SettingKey } from '../../shared/settings';
import {
  assetOf,
  escapeAttribute,
  importEntries,
  loadAssets,
  pageHeaders,
  publicFile,
  RTL_LANGUAGES,
  serveAsset,
  url as consoleUrl,
  type Asset,
} from './console.service';

const OWN_FILE = /^[a-z][a-z0-9-]*\.(js|css|png|svg)$/;
export const MANIFEST = 'manifest.webmanifest';
const THEME = '#0b57d0';
const BACKGROUND = '#f6f8fa';

/** The switches the page reads to offer only what the operator turned on (the API refuses the rest anyway). */
const FEATURES = [
  'self_care_enabled',
  'self_care_code_sign_in',
  'self_care_payments',
  'self_care_renew',
  'self_care_topup',
  'self_care_redeem',
  'self_care_change_plan',
  'self_care_password',
  'self_care_auto_renew',
] as const satisfies readonly SettingKey[];

export const myDir = () => path.join(repoRoot(), 'services', 'gateway', 'my');

function ownAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of fs.readdirSync(myDir())) {
    if (!OWN_FILE.test(name)) continue;
    assets.set(name, assetOf(fs.readFileSync(path.join(myDir(), name)), name));
  }
  return assets;
}

const myUrl = (name: string, assets: Map<string, Asset>) => `/my/${name}?v=${assets.get(name)?.version ?? ''}`;

export interface MyPage {
  html(language: string, operatorName: string, features: string[]): string;
  manifest(language: string, operatorName: string): string;
  headers: Record<string, string>;
}

export function buildMyPage(consoleAssets: Map<string, Asset>, own: Map<string, Asset>): MyPage {
  const template = fs.readFileSync(path.join(myDir(), 'index.html'), 'utf8');
  const imports = importEntries(consoleAssets);
  for (const name of own.keys()) if (name.endsWith('.js')) imports[`/my/${name}`] = myUrl(name, own);
  const map = JSON.stringify({ imports });
  const mapHash = crypto.createHash('sha256').update(map).digest('base64');
  const csp = [
    "default-src 'none'",
    `script-src 'self' 'sha256-${mapHash}'`,
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "manifest-src 'self'",
    "object-src 'none'",
    "frame-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
  const languageOf = (language: string) => (/^[a-z]{2}$/.test(language) ? language : 'en');
  return {
    html(language, operatorName, features) {
      const lang = languageOf(language);
      return (
        template
          .replaceAll('{{lang}}', lang)
          .replace('{{dir}}', RTL_LANGUAGES.has(lang) ? 'rtl' : 'ltr')
          .replace('{{importmap}}', map)
          .replace('{{consolecss}}', consoleUrl('app.css', consoleAssets))
          .replace('{{uplotcss}}', consoleUrl('uplot.css', consoleAssets))
          .replace('{{css}}', myUrl('my.css', own))
          .replace('{{app}}', myUrl('app.js', own))
          .replaceAll('{{icon}}', myUrl('icon-192.png', own))
          .replace('{{theme}}', THEME)
          .replace('{{features}}', features.join(' '))
          // Last, and by a function: the name's own text is never read as a placeholder or as `$&`.
          .replace('{{operator}}', () => escapeAttribute(operatorName))
      );
    },
    manifest(language, operatorName) {
      const lang = languageOf(language);
      // The operator's name is the app's name on the phone's home screen; "Self-care" until one is set.
      const name = operatorName.trim() || 'Self-care';
      return JSON.stringify({
        name,
        short_name: name.slice(0, 12),
        id: '/my',
        start_url: '/my',
        scope: '/my',
        display: 'standalone',
        lang,
        dir: RTL_LANGUAGES.has(lang) ? 'rtl' : 'ltr',
        background_color: BACKGROUND,
        theme_color: THEME,
        icons: [
          { src: myUrl('icon-192.png', own), sizes: '192x192', type: 'image/png', purpose: 'any' },
          { src: myUrl('icon-512.png', own), sizes: '512x512', type: 'image/png', purpose: 'any' },
          { src: myUrl('icon-maskable-512.png', own), sizes: '512x512', type: 'image/png', purpose: 'maskable' },
        ],
      });
    },
    headers: pageHeaders(csp),
  };
}

interface MyPageThis extends Service {
  assets: Map<string, Asset>;
  page: MyPage;
  unavailable?: string;
}

const languageQuery = {
  type: 'object',
  properties: { lang: { type: 'string', pattern: '^[a-z]{2}$' } },
} as const;

/** The language asked for (the page's switch), else the operator's. */
async function pageSettings(lang: string | undefined) {
  const s = await loadSettings(db(), ['language', 'operator_name', ...FEATURES]);
  return { s, language: lang ?? s.language };
}

export function createMyPageService(): ServiceSchema {
  const schema: ServiceSchema<ServiceSettingSchema, MyPageThis> = {
    name: 'my-page',
    actions: {
      page: {
        rest: 'GET /my',
        http: {
          ...publicFile,
          summary: "The subscriber's self-care page (a browser application on /api/my, installable on a phone)",
          produces: 'html',
          query: languageQuery,
          errors: { 503: 'The page files are not installed' },
        } satisfies HttpRoute,
        async handler(this: MyPageThis, ctx: Ctx<{ lang?: string }>): Promise<string> {
          if (this.unavailable) throw fail('consoleUnavailable', this.unavailable);
          const { s, language } = await pageSettings(ctx.params.lang);
          const on = FEATURES.filter((f) => s[f] === true).map((f) => f.replace(/^self_care_/, ''));
          ctx.meta.$responseHeaders = this.page.headers;
          return this.page.html(language, s.operator_name, on);
        },
      },
      asset: {
        rest: 'GET /my/:file',
        http: {
          ...publicFile,
          summary: "A file of the subscriber's page: its modules, styles, icons and web app manifest",
          produces: 'text',
          params: {
            type: 'object',
            properties: { file: { type: 'string', pattern: '^[a-z0-9][a-z0-9.-]{0,63}$' } },
            required: ['file'],
          },
          query: {
            type: 'object',
            properties: { v: { type: 'string', maxLength: 64 }, lang: languageQuery.properties.lang },
          },
          errors: { 404: 'No such file', 503: 'The page files are not installed' },
        } satisfies HttpRoute,
        async handler(
          this: MyPageThis,
          ctx: Ctx<{ file: string; v?: string; lang?: string }>,
        ): Promise<Buffer | string> {
          if (this.unavailable) throw fail('consoleUnavailable', this.unavailable);
          if (ctx.params.file === MANIFEST) {
            const { s, language } = await pageSettings(ctx.params.lang);
            ctx.meta.$responseHeaders = {
              'Content-Type': 'application/manifest+json; charset=utf-8',
              'X-Content-Type-Options': 'nosniff',
              'Cache-Control': 'no-cache',
            };
            return this.page.manifest(language, s.operator_name);
          }
          return serveAsset(this.assets, ctx);
        },
      },
    },
    created(this: MyPageThis) {
      try {
        this.assets = ownAssets();
        this.page = buildMyPage(loadAssets(), this.assets);
      } catch (err) {
        this.unavailable = `the self-care page's files are missing (${myDir()}): ${(err as Error).message}`;
        this.logger.error(this.unavailable);
      }
    },
  };
  return schema as ServiceSchema;
}
