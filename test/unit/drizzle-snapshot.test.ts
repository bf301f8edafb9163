/**
 * `npm run db:generate` diffs shared/db/schema.ts against the newest snapshot in
 * shared/db/migrations/meta. Every migration must leave that snapshot equal to the schema, or the
 * next generate re-emits what earlier migrations already made (docs/conventions.md, "Database").
 * Generate runs on a copy of the migrations, so a drift fails here without writing a file.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.join(__dirname, '..', '..');

test('drizzle-kit generate finds nothing to migrate against schema.ts', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drizzle-snapshot-'));
  try {
    fs.cpSync(path.join(root, 'shared', 'db', 'migrations'), path.join(dir, 'migrations'), { recursive: true });
    const config = path.join(dir, 'drizzle.config.json');
    fs.writeFileSync(
      config,
      JSON.stringify({
        dialect: 'postgresql',
        // drizzle-kit reads both paths relative to its working directory.
        schema: path.relative(dir, path.join(root, 'shared', 'db', 'schema.ts')),
        out: './migrations',
      }),
    );
    const run = spawnSync(path.join(root, 'node_modules', '.bin', 'drizzle-kit'), ['generate', `--config=${config}`], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: expect.any(String) });
    expect(run.stdout + run.stderr).toContain('No schema changes, nothing to migrate');
    expect(fs.readdirSync(path.join(dir, 'migrations')).sort()).toEqual(
      fs.readdirSync(path.join(root, 'shared', 'db', 'migrations')).sort(),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
