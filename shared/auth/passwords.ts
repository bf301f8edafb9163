import bcrypt from 'bcryptjs';

const COST = Number(process.env.BCRYPT_COST || 11);
let dummyHash: Promise<string> | undefined;

export function hashPassword(plain: string): Promise<string> {
  return bcrypt.hash(plain, COST);
}

/** With no stored hash (unknown user) it still spends a full comparison, so timing tells nothing. */
export async function verifyPassword(plain: string, hash: string | undefined): Promise<boolean> {
  if (hash) return bcrypt.compare(plain, hash);
  dummyHash ??= bcrypt.hash('no such user', COST);
  await bcrypt.compare(plain, await dummyHash);
  return false;
}
