/**
 * POST /api/imports and GET /api/imports/:id (docs/import.md, "Through the API"): the import of
 * `npm run import` as a background job for admins. The job is a `bulk_jobs` row of action `import`
 * (no table of its own): `total` and `processed` count the subscribers to write and the source's
 * history rows, and those written and gone through (shared/import/writer.ts), `payload` holds the request (the source without its password), the phase, the final report or
 * the error. Jobs run one at a time per installation (a session advisory lock: a second one waits,
 * `queued`), in the process that accepted them; one cut short by a stop is `running` for good and
 * is resumed by starting it again (the import is idempotent).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { and, eq, sql } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import { recordAudit } from '../../shared/audit';
import { requireAdmin } from '../../shared/auth/policy';
import { db, pgPool } from '../../shared/db/client';
import { bulkJobs } from '../../shared/db/schema';
import { FAILURES, fail } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { adminErrors, idParams, isoTimestamp, type IdPath } from '../../shared/http/schemas';
import { ImportInputError, runImport, type ImportReport } from '../../shared/import';
import { redactUrl } from '../../shared/import/sources/mysql';
import { parseMysqlUrl } from '../../shared/import/sources/mysql-url';
import { safeMessage } from '../../shared/import/writer';
import { config } from '../../shared/config';
import { checkOutgoingHost } from '../../shared/net/address-policy';
import { loadSettings } from '../../shared/settings';
import { importBody, type ImportBody } from './schemas';

const ACTION = 'import';
/** How long a source database has to answer; a failure to connect is reported no sooner (docs/import.md). */
const connectTimeoutMs = () => Number(process.env.IMPORT_CONNECT_TIMEOUT_MS) || 10_000;
const LOCK_SQL = `hashtext('import.job')`;

/** Folder whose files and subfolders an admin may name as a CSV `source`: IMPORT_DIR, default DATA_DIR/imports. */
export function importDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.IMPORT_DIR || path.join(config().dataDir, 'imports'));
}

interface JobPayload {
  from: ImportBody['from'];
  /** The database URL without its password, the server-side path, or `uploaded files (n bytes)`. */
  source: string;
  dry_run: boolean;
  phase: 'queued' | 'reading and planning' | 'writing' | 'done' | 'failed';
  report?: ImportReport;
  error?: string;
}

/**
 * The request checked beyond its schema; the 400 names the field. A database source's host is
 * under the outgoing-address policy here, before any job, and again when the job connects.
 */
async function checkRequest(p: ImportBody): Promise<{ source?: string; shown: string }> {
  const bad = (why: string) => fail('invalidRequest', why);
  if (p.from === 'csv') {
    if (p.source !== undefined && p.files !== undefined) throw bad('give either source or files, not both');
    if (p.files) {
      const bytes = Object.values(p.files).reduce((n, f) => n + Buffer.byteLength(f ?? ''), 0);
      return { shown: `uploaded files (${bytes} bytes)` };
    }
    if (p.source === undefined) throw bad('source is required (a file or folder under IMPORT_DIR), or files');
    if ([...p.source].some((c) => c.charCodeAt(0) < 32)) throw bad('source must not contain control characters');
    const root = importDir();
    const full = path.resolve(root, p.source);
    if (full !== root && !full.startsWith(root + path.sep)) throw bad(`source must be a file or folder under ${root}`);
    let real: string;
    try {
      real = fs.realpathSync(full);
    } catch {
      throw bad(`source: no such file or folder under ${root}: ${p.source}`);
    }
    const realRoot = fs.realpathSync(root);
    if (real !== realRoot && !real.startsWith(realRoot + path.sep))
      throw bad(`source must be a file or folder under ${root}`);
    return { source: real, shown: p.source };
  }
  if (p.files !== undefined) throw bad(`files is for csv; ${p.from} reads a database: give source`);
  if (p.columns !== undefined) throw bad('columns is for csv only');
  if (p.source === undefined)
    throw bad(`source is required: the ${p.from} database URL (mysql://user:password@host/db)`);
  let host: string;
  try {
    host = parseMysqlUrl(p.source).host;
  } catch (err) {
    if (err instanceof ImportInputError) throw bad(err.message);
    throw err;
  }
  await checkOutgoingHost('source', host, await allowPrivateTargets());
  return { source: p.source, shown: redactUrl(p.source) };
}

async function allowPrivateTargets(): Promise<boolean> {
  return (await loadSettings(db(), ['allow_private_targets'])).allow_private_targets === true;
}

function jobView(j: typeof bulkJobs.$inferSelect) {
  const p = j.payload as JobPayload;
  return {
    id: j.id,
    from: p.from,
    source: p.source,
    dry_run: p.dry_run,
    status: j.status,
    phase: p.phase,
    total: j.total,
    processed: j.processed,
    report: p.report ?? null,
    error: p.error ?? null,
    manager_id: j.managerId,
    created_at: isoTimestamp(j.createdAt),
    finished_at: isoTimestamp(j.finishedAt),
  };
}

async function setPhase(id: number, phase: JobPayload['phase'], extra: Partial<JobPayload> = {}, status?: string) {
  await db()
    .update(bulkJobs)
    .set({
      payload: sql`${bulkJobs.payload} || ${JSON.stringify({ phase, ...extra })}::jsonb`,
      ...(status ? { status } : {}),
      ...(status === 'done' || status === 'failed' ? { finishedAt: sql`now()` } : {}),
    })
    .where(eq(bulkJobs.id, id));
}

/** Every issue of job `id` as CSV, under DATA_DIR/import-reports (docs/import.md). */
function issuesFileOf(id: number): string {
  const dir = path.join(config().dataDir, 'import-reports');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return path.join(dir, `import-${id}-issues.csv`);
}

/** Runs the job under the installation's import lock (waiting for a running one), recording progress. */
async function runJob(
  id: number,
  p: ImportBody,
  source: string,
  cleanup: () => void,
  managerId: number,
): Promise<void> {
  const client = await pgPool().connect();
  let broken: Error | undefined;
  try {
    await client.query(`select pg_advisory_lock(${LOCK_SQL})`);
    await setPhase(id, 'reading and planning', {}, 'running');
    const report = await runImport(db(), {
      from: p.from,
      source,
      dryRun: p.dry_run ?? false,
      columns: p.columns,
      defaultReseller: p.reseller,
      batchSize: p.batch_size,
      managerId,
      issuesFile: issuesFileOf(id),
      connection: { allowPrivateTargets: await allowPrivateTargets(), connectTimeoutMs: connectTimeoutMs() },
      onProgress: async (done, total) => {
        await db()
          .update(bulkJobs)
          .set({ total, processed: done, payload: sql`${bulkJobs.payload} || '{"phase":"writing"}'::jsonb` })
          .where(eq(bulkJobs.id, id));
      },
    });
    await setPhase(id, 'done', { report }, 'done');
  } catch (err) {
    await setPhase(id, 'failed', { error: safeMessage(err) }, 'failed');
  } finally {
    cleanup();
    try {
      await client.query(`select pg_advisory_unlock(${LOCK_SQL})`);
    } catch (err) {
      broken = err as Error;
    }
    client.release(broken);
  }
}

/** CSV text of the body into a folder of its own, read like a server-side folder. */
function writeUploadedFiles(files: NonNullable<ImportBody['files']>): { dir: string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-upload-'));
  for (const [name, content] of Object.entries(files)) {
    if (content !== undefined) fs.writeFileSync(path.join(dir, `${name}.csv`), content, { mode: 0o600 });
  }
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export const importService: ServiceSchema = {
  name: 'imports',
  actions: {
    start: {
      rest: 'POST /api/imports',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary:
          'Start an import from daloRADIUS, phpnuxbill or CSV (docs/import.md) as a background job: 202 { id }; GET /api/imports/:id shows its progress and report',
        tag: 'imports',
        body: importBody,
        success: 202,
        errors: {
          ...adminErrors,
          400: `A field is missing or unusable (the message names it); ${FAILURES.targetNotAllowed.message('source', '<why>')} for a database host the address policy refuses`,
        },
      },
      async handler(ctx: Ctx<ImportBody>): Promise<ActionResult> {
        const auth = requireAdmin(ctx.meta.auth);
        const p = ctx.params;
        const { source, shown } = await checkRequest(p);
        const upload = p.files ? writeUploadedFiles(p.files) : undefined;
        const payload: JobPayload = { from: p.from, source: shown, dry_run: p.dry_run ?? false, phase: 'queued' };
        let id: number;
        try {
          id = await db().transaction(async (tx) => {
            const [row] = await tx
              .insert(bulkJobs)
              .values({ managerId: auth.managerId, action: ACTION, ids: [], payload, total: 0, status: 'queued' })
              .returning({ id: bulkJobs.id });
            await recordAudit(tx, auth, {
              action: 'import.start',
              entity: 'bulk_job',
              entityId: row.id,
              details: { from: p.from, source: shown, dry_run: payload.dry_run, uploaded: p.files !== undefined },
            });
            return row.id;
          });
        } catch (err) {
          upload?.cleanup();
          throw err;
        }
        runJob(id, p, upload?.dir ?? source!, upload?.cleanup ?? (() => undefined), auth.managerId).catch((err) =>
          this.logger.error('import job failed', id, safeMessage(err)),
        );
        ctx.meta.$statusCode = 202;
        return { data: { id, status: 'queued' } };
      },
    },

    show: {
      rest: 'GET /api/imports/:id',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'Status, progress (subscribers written of those to write) and, when done, the reconciliation report',
        tag: 'imports',
        params: idParams(),
        errors: { ...adminErrors, 404: 'No import job of that id' },
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const [job] = await db()
          .select()
          .from(bulkJobs)
          .where(and(eq(bulkJobs.id, ctx.params.id), eq(bulkJobs.action, ACTION)));
        if (!job) throw fail('notFound');
        return { data: jobView(job) };
      },
    },
  },
};
