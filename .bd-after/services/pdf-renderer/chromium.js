"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.ChromiumNotFoundError = exports.CHROMIUM_ARGS = exports.DEBIAN_CHROMIUM = void 0;
exports.findChromium = findChromium;
/**
 * Which Chromium the renderer drives: `CHROMIUM_PATH`, else Debian's `/usr/bin/chromium`, else the
 * browser `npx playwright install chromium` would have put in Playwright's cache. Nothing is ever
 * downloaded at run time: a missing browser is a start-up error that names the fix.
 */
const node_fs_1 = __importDefault(require("node:fs"));
const playwright_core_1 = require("playwright-core");
exports.DEBIAN_CHROMIUM = '/usr/bin/chromium';
/** Flags measured to work in containers on these machines (ARCHITECTURE section 8). */
exports.CHROMIUM_ARGS = [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
];
class ChromiumNotFoundError extends Error {
    constructor(tried) {
        super(`pdf-renderer: no Chromium found (tried ${tried.join(', ')}). ` +
            'Install one (Debian/Ubuntu: apt-get install -y chromium) or set CHROMIUM_PATH to a Chromium or Chrome executable.');
        this.name = 'ChromiumNotFoundError';
    }
}
exports.ChromiumNotFoundError = ChromiumNotFoundError;
function playwrightOwn() {
    try {
        return playwright_core_1.chromium.executablePath();
    }
    catch {
        // playwright-core throws when it has no browser registry entry for this platform.
        return undefined;
    }
}
function findChromium(env = process.env, exists = node_fs_1.default.existsSync) {
    const explicit = env.CHROMIUM_PATH?.trim();
    if (explicit) {
        // An explicit path that is wrong is a mistake to report, not a reason to fall back silently.
        if (!exists(explicit))
            throw new ChromiumNotFoundError([`CHROMIUM_PATH=${explicit}`]);
        return explicit;
    }
    const candidates = [exports.DEBIAN_CHROMIUM, playwrightOwn()].filter((p) => !!p);
    const found = candidates.find((p) => exists(p));
    if (!found)
        throw new ChromiumNotFoundError(['CHROMIUM_PATH (unset)', ...candidates]);
    return found;
}
//# sourceMappingURL=chromium.js.map