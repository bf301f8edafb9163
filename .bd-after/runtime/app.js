"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.resolveEncryptionKey = resolveEncryptionKey;
exports.startApp = startApp;
const node_crypto_1 = __importDefault(require("node:crypto"));
const node_fs_1 = __importDefault(require("node:fs"));
const node_path_1 = __importDefault(require("node:path"));
const moleculer_1 = require("moleculer");
const moleculer_config_1 = require("../moleculer.config");
const metrics_service_1 = require("./metrics-service");
const ops_server_1 = require("./ops-server");
const units_1 = require("./units");
const config_1 = require("../shared/config");
const client_1 = require("../shared/db/client");
const database_setup_1 = require("../shared/db/database-setup");
/** ENCRYPTION_KEY, or in the embedded default a key generated once into DATA_DIR. */
function resolveEncryptionKey(cfg, embedded) {
    if (cfg.encryptionKey)
        return cfg.encryptionKey;
    if (!embedded)
        throw new config_1.ConfigError('ENCRYPTION_KEY is required when DATABASE_URL is set (32 bytes, hex or base64)');
    const file = node_path_1.default.resolve(cfg.dataDir, 'encryption.key');
    if (!node_fs_1.default.existsSync(file)) {
        node_fs_1.default.mkdirSync(cfg.dataDir, { recursive: true });
        node_fs_1.default.writeFileSync(file, node_crypto_1.default.randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
    }
    return (0, config_1.parseEncryptionKey)(node_fs_1.default.readFileSync(file, 'utf8').trim());
}
async function startApp(cfg, opts = {}) {
    let embedded;
    let databaseUrl = cfg.databaseUrl;
    if (!databaseUrl) {
        embedded = await (0, database_setup_1.startEmbeddedPostgres)({
            dataDir: cfg.dataDir,
            port: cfg.embeddedPgPort,
        });
        databaseUrl = embedded.url;
    }
    const finalCfg = (0, config_1.setConfig)({ ...cfg, databaseUrl, encryptionKey: resolveEncryptionKey(cfg, !!embedded) });
    let holdsDatabase = false;
    try {
        if (opts.migrate !== false)
            await (0, database_setup_1.runMigrations)(databaseUrl);
        (0, client_1.initDatabase)(databaseUrl);
        holdsDatabase = true;
        const broker = new moleculer_1.ServiceBroker((0, moleculer_config_1.brokerOptions)(finalCfg, opts.broker));
        for (const schema of (0, units_1.schemasFor)(finalCfg.services))
            broker.createService(schema);
        broker.createService(metrics_service_1.nodeMetricsService);
        await broker.start();
        const ops = await (0, ops_server_1.startOpsServer)(broker, process.env.OPS_PORT ? Number(process.env.OPS_PORT) : undefined);
        const gateway = broker.getLocalService('gateway');
        const address = gateway?.server?.address();
        return {
            broker,
            databaseUrl,
            baseUrl: address ? `http://127.0.0.1:${address.port}` : undefined,
            ops,
            async stop() {
                await broker.stop();
                await ops?.close();
                await (0, client_1.closeDatabase)();
                if (embedded)
                    await embedded.stop();
            },
        };
    }
    catch (err) {
        if (holdsDatabase)
            await (0, client_1.closeDatabase)();
        if (embedded)
            await embedded.stop();
        throw err;
    }
}
//# sourceMappingURL=app.js.map