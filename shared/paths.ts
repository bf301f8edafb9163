import fs from 'node:fs';
import path from 'node:path';

let root: string | undefined;

/** The folder holding package.json, whether running from sources or from dist/. */
export function repoRoot(): string {
  if (root) return root;
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + __dirname);
    dir = parent;
  }
  root = dir;
  return root;
}
