/** Names of scheduled backups and which of them retention deletes (pure: the service does the I/O). */

const PATTERN = /^billing-(\d{8}T\d{6}Z)\.backup$/;

/** `billing-20261128T193000Z.backup`: sorts by time as text. */
export function backupFileName(at: Date): string {
  return `billing-${at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}.backup`;
}

export function isBackupFile(name: string): boolean {
  return PATTERN.test(name);
}

/** The files beyond the newest `keep`, oldest first; files not named by backupFileName are never touched. */
export function beyondRetention(names: string[], keep: number): string[] {
  const ours = names.filter(isBackupFile).sort();
  return ours.slice(0, Math.max(0, ours.length - keep));
}
