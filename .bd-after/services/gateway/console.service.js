"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.consoleDir = void 0;
exports.loadAssets = loadAssets;
exports.importMap = importMap;
exports.buildPage = buildPage;
exports.createConsoleService = createConsoleService;
/**
 * The operator console: one HTML page at `/` and its static files at `/console/:file`. The page is
 * a browser application that works through the public API only (docs/console.md); this service
 * only hands out files, read once at start from services/gateway/console/ and from the front-end
 * packages in node_modules, by exact name (an allowlist, so no path ever reaches the file system).
 */
const node_crypto_1 = __importDefault(require("node:crypto"));
const node_fs_1 = __importDefault(require("node:fs"));
const node_path_1 = __importDefault(require("node:path"));
const client_1 = require("../../shared/db/client");
const errors_1 = require("../../shared/errors");
const paths_1 = require("../../shared/paths");
const settings_1 = require("../../shared/settings");
const TYPES = {
    '.js': 'text/javascript; charset=utf-8',
    '.mjs': 'text/javascript; charset=utf-8',
    '.css': 'text/css; charset=utf-8',
};
/** Front-end packages served under our own origin (operators run closed networks: no CDN). */
const VENDOR = {
    'preact.mjs': ['preact', 'dist/preact.mjs'],
    'preact-hooks.mjs': ['preact', 'hooks/dist/hooks.mjs'],
    'htm.mjs': ['htm', 'dist/htm.mjs'],
    'uplot.mjs': ['uplot', 'dist/uPlot.esm.js'],
    'uplot.css': ['uplot', 'dist/uPlot.min.css'],
};
/** Bare specifiers the console's modules import, resolved by the page's import map. */
const IMPORTS = {
    preact: 'preact.mjs',
    'preact/hooks': 'preact-hooks.mjs',
    htm: 'htm.mjs',
    uplot: 'uplot.mjs',
};
const RTL_LANGUAGES = new Set(['ar', 'fa', 'he', 'ur']);
const OWN_FILE = /^[a-z][a-z0-9-]*\.(js|css)$/;
const consoleDir = () => node_path_1.default.join((0, paths_1.repoRoot)(), 'services', 'gateway', 'console');
exports.consoleDir = consoleDir;
/**
 * Where npm installs a direct dependency. Not require.resolve: these packages' `exports` hide
 * their package.json and ES-module files from Node's resolver, and jest's resolver differs.
 */
function packageDir(pkg) {
    return node_path_1.default.join((0, paths_1.repoRoot)(), 'node_modules', pkg);
}
function asset(file) {
    const body = node_fs_1.default.readFileSync(file);
    const type = TYPES[node_path_1.default.extname(file)];
    if (!type)
        throw new Error(`console asset of unknown type: ${file}`);
    return { body, type, version: node_crypto_1.default.createHash('sha256').update(body).digest('hex').slice(0, 12) };
}
function loadAssets() {
    const assets = new Map();
    for (const name of node_fs_1.default.readdirSync((0, exports.consoleDir)())) {
        if (OWN_FILE.test(name))
            assets.set(name, asset(node_path_1.default.join((0, exports.consoleDir)(), name)));
    }
    for (const [name, [pkg, file]] of Object.entries(VENDOR))
        assets.set(name, asset(node_path_1.default.join(packageDir(pkg), file)));
    return assets;
}
const url = (name, assets) => `/console/${name}?v=${assets.get(name)?.version ?? ''}`;
/**
 * The import map names every module with its versioned URL, the bare packages and the console's
 * own files alike (a relative `./api.js` import resolves to `/console/api.js`, which the map
 * rewrites), so every file can be cached for good.
 */
function importMap(assets) {
    const imports = {};
    for (const [specifier, name] of Object.entries(IMPORTS))
        imports[specifier] = url(name, assets);
    for (const name of assets.keys())
        if (name.endsWith('.js') || name.endsWith('.mjs'))
            imports[`/console/${name}`] = url(name, assets);
    return JSON.stringify({ imports });
}
/** The page and its security headers; the CSP allows the one inline script (the import map) by hash. */
function buildPage(assets) {
    const template = node_fs_1.default.readFileSync(node_path_1.default.join((0, exports.consoleDir)(), 'index.html'), 'utf8');
    const map = importMap(assets);
    const mapHash = node_crypto_1.default.createHash('sha256').update(map).digest('base64');
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
        html(language) {
            const lang = /^[a-z]{2}$/.test(language) ? language : 'en';
            return template
                .replace('{{lang}}', lang)
                .replace('{{dir}}', RTL_LANGUAGES.has(lang) ? 'rtl' : 'ltr')
                .replace('{{importmap}}', map)
                .replace('{{css}}', url('app.css', assets))
                .replace('{{uplotcss}}', url('uplot.css', assets))
                .replace('{{app}}', url('app.js', assets));
        },
        headers: {
            'Content-Type': 'text/html; charset=utf-8',
            // The page is tiny and carries the language: always fresh.
            'Cache-Control': 'no-store',
            'Content-Security-Policy': csp,
            'X-Content-Type-Options': 'nosniff',
            'X-Frame-Options': 'DENY',
            'Referrer-Policy': 'no-referrer',
            'Cross-Origin-Opener-Policy': 'same-origin',
            'Permissions-Policy': 'camera=(), microphone=(), geolocation=()',
        },
    };
}
const publicFile = {
    auth: 'public',
    access: 'none',
    rateLimit: 'none',
    tag: 'console',
};
function createConsoleService() {
    const schema = {
        name: 'console',
        actions: {
            page: {
                rest: 'GET /',
                http: {
                    ...publicFile,
                    summary: 'The operator console (a browser application on this API)',
                    produces: 'html',
                    errors: { 503: 'The console files are not installed' },
                },
                async handler(ctx) {
                    // Everyone sees the layout direction of the operator's language, not only admins (who
                    // alone may read GET /api/settings), so the page carries it.
                    if (this.unavailable)
                        throw new errors_1.ApiError(503, this.unavailable);
                    const { language } = await (0, settings_1.loadSettings)((0, client_1.db)(), ['language']);
                    ctx.meta.$responseHeaders = this.page.headers;
                    return this.page.html(language);
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
                },
                handler(ctx) {
                    if (this.unavailable)
                        throw new errors_1.ApiError(503, this.unavailable);
                    const found = this.assets.get(ctx.params.file);
                    if (!found)
                        throw (0, errors_1.notFound)('no such console file');
                    ctx.meta.$responseHeaders = {
                        'Content-Type': found.type,
                        'X-Content-Type-Options': 'nosniff',
                        'Cache-Control': ctx.params.v === found.version ? 'public, max-age=31536000, immutable' : 'no-cache',
                    };
                    return found.body;
                },
            },
        },
        created() {
            try {
                this.assets = loadAssets();
                this.page = buildPage(this.assets);
            }
            catch (err) {
                this.unavailable = `the console's files are missing (${(0, exports.consoleDir)()}, preact, htm, uplot): ${err.message}`;
                this.logger.error(this.unavailable);
            }
        },
    };
    return schema;
}
//# sourceMappingURL=console.service.js.map