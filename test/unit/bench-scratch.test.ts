/** Issue 26: a bench's scratch DATA_DIR (bench/scratch.ts), left for the embedded start to make. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scratchDataDir } from '../../bench/scratch';

let parent: string;
beforeEach(() => {
  parent = fs.mkdtempSync(path.join(os.tmpdir(), 'scratch-test-'));
});
afterEach(() => fs.rmSync(parent, { recursive: true, force: true }));

describe('scratchDataDir', () => {
  it('names a fresh directory under the parent and does not make it', () => {
    const a = scratchDataDir('cards', parent);
    const b = scratchDataDir('cards', parent);
    expect(path.dirname(a.dir)).toBe(parent);
    expect(path.basename(a.dir)).toMatch(/^bench-cards-[0-9a-f]{24}$/);
    expect(a.dir).not.toBe(b.dir);
    expect(fs.existsSync(a.dir)).toBe(false);
    a.dispose();
    b.dispose();
  });

  it('removes the directory and a cluster kept elsewhere behind DATA_DIR/pg, once, and stops watching exit', () => {
    const exitHooks = process.listenerCount('exit');
    const s = scratchDataDir('coa', parent);
    expect(process.listenerCount('exit')).toBe(exitHooks + 1);
    const kept = path.join(parent, 'root-store-cluster');
    fs.mkdirSync(path.join(kept, 'base'), { recursive: true });
    fs.mkdirSync(s.dir);
    fs.writeFileSync(path.join(s.dir, 'pg-password'), 'x');
    fs.symlinkSync(kept, path.join(s.dir, 'pg'));
    s.dispose();
    expect(fs.existsSync(s.dir)).toBe(false);
    expect(fs.existsSync(kept)).toBe(false);
    expect(process.listenerCount('exit')).toBe(exitHooks);
    expect(() => s.dispose()).not.toThrow();
  });

  it('disposes of a directory that was never made', () => {
    const s = scratchDataDir('lifecycle', parent);
    expect(() => s.dispose()).not.toThrow();
    expect(fs.readdirSync(parent)).toEqual([]);
  });
});
