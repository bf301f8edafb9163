/**
 * The sessions' reader as the writer hands it to importSessions (shared/import/writer.ts): it stops
 * at the next chunk once the history failed, and keeps the source's estimate, by which a bulk load
 * drops radacct's two indexes (a wrapper without it made every import keep them: a full-scale run
 * of 29 Nov 2026 wrote 10,000,000 sessions through them).
 */
import type { ImportSession, SessionReader } from '../../shared/import/sessions';
import { stoppedBy } from '../../shared/import/writer';
import { importSession } from '../helpers/import-session';

function reader(chunks: ImportSession[][], estimate?: number): SessionReader {
  return {
    ...(estimate === undefined ? {} : { estimate: async () => estimate }),
    async *chunks() {
      yield* chunks;
    },
  };
}

async function read(r: SessionReader): Promise<ImportSession[][]> {
  const out: ImportSession[][] = [];
  for await (const c of r.chunks(10)) out.push(c);
  return out;
}

describe('stoppedBy', () => {
  it("keeps the source's estimate", async () => {
    await expect(stoppedBy(reader([], 9_896_067), () => undefined).estimate?.()).resolves.toBe(9_896_067);
    expect(stoppedBy(reader([]), () => undefined).estimate).toBeUndefined();
  });

  it('passes every chunk while nothing failed, and throws at the next one after a failure', async () => {
    const chunks = [[importSession()], [importSession({ uniqueId: 'u2' })], [importSession({ uniqueId: 'u3' })]];
    expect(await read(stoppedBy(reader(chunks), () => undefined))).toEqual(chunks);
    let failure: Error | undefined;
    const seen: ImportSession[][] = [];
    const stopped = stoppedBy(reader(chunks), () => failure);
    await expect(
      (async () => {
        for await (const c of stopped.chunks(10)) {
          seen.push(c);
          failure = new Error('history batch failed');
        }
      })(),
    ).rejects.toThrow("stopped: the subscribers' history failed");
    expect(seen).toEqual([chunks[0]]);
  });
});
