import { fail, type FixedFailure } from '../failures';

/** PostgreSQL's error under a thrown one: Drizzle wraps driver errors in `cause`. */
function pgError(err: unknown): { code: string; constraint?: string } | undefined {
  let e = err as { code?: unknown; constraint?: string; cause?: unknown } | undefined;
  for (let i = 0; e && i < 4; i++) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return { code: e.code, constraint: e.constraint };
    e = e.cause as typeof e;
  }
  return undefined;
}

const pgCode = (err: unknown) => pgError(err)?.code;
/** The constraint or index a violation names, e.g. `subscribers_username_live_uq`. */
export const violatedConstraint = (err: unknown) => pgError(err)?.constraint;

export const isUniqueViolation = (err: unknown) => pgCode(err) === '23505';
export const isExclusionViolation = (err: unknown) => pgCode(err) === '23P01';
export const isSerializationFailure = (err: unknown) => pgCode(err) === '40001' || pgCode(err) === '40P01';
/** `lock_timeout` ran out (55P03, lock_not_available). */
export const isLockTimeout = (err: unknown) => pgCode(err) === '55P03';

/** Runs a write; a unique-index violation becomes the failure `taken` (e.g. `usernameTaken`). */
export async function conflictOnDuplicate<T>(taken: FixedFailure, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw fail(taken);
    throw err;
  }
}
