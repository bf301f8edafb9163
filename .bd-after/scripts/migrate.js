"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
/** `npm run migrate`: apply the SQL migrations to DATABASE_URL (or the embedded database) and exit. */
const database_setup_1 = require("../shared/db/database-setup");
async function main() {
    const url = process.env.DATABASE_URL;
    if (url) {
        await (0, database_setup_1.runMigrations)(url);
    }
    else {
        const pg = await (0, database_setup_1.startEmbeddedPostgres)({ dataDir: process.env.DATA_DIR || './data' });
        try {
            await (0, database_setup_1.runMigrations)(pg.url);
        }
        finally {
            await pg.stop();
        }
    }
    console.log('migrations applied');
}
main().catch((err) => {
    console.error(err);
    process.exit(1);
});
//# sourceMappingURL=migrate.js.map