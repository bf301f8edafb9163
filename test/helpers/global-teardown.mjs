// Drops every database this run created (they share the run id prefix), then stops the embedded
// server if the setup started one, so no run leaves anything behind on a shared server.
import fs from 'node:fs';
import pg from 'pg';

export default async function globalTeardown() {
  const adminUrl = process.env.TEST_PG_ADMIN_URL;
  const runId = process.env.TEST_RUN_ID;
  if (adminUrl && runId) {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    const { rows } = await admin.query('select datname from pg_database where datname like $1', [`${runId}%`]);
    for (const { datname } of rows) await admin.query(`drop database if exists "${datname}" with (force)`);
    await admin.end();
  }
  const embedded = globalThis.__embeddedPg;
  if (embedded) {
    await embedded.server.stop();
    fs.rmSync(embedded.dataDir, { recursive: true, force: true });
  }
}
