/** `npm run migrate`: apply the SQL migrations to DATABASE_URL (or the embedded database) and exit. */
import { runMigrations, startEmbeddedPostgres } from '../shared/db/database-setup';

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (url) {
    await runMigrations(url);
  } else {
    const pg = await startEmbeddedPostgres({ dataDir: process.env.DATA_DIR || './data' });
    try {
      await runMigrations(pg.url);
    } finally {
      await pg.stop();
    }
  }
  console.log('migrations applied');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
