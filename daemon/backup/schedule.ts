import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** `monctl-2026-11-28T19-05-12.345Z.db`: the UTC time it was taken; name order is time order. */
const NAME = /^monctl-(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2}\.\d{3})Z\.db$/;

export const backupNameAt = (at: Date) => `monctl-${at.toISOString().replace(/:/g, '-')}.db`;

/** The scheduled backups in `dir`, oldest first: only names this schedule writes, never other files. */
export function scheduledBackups(dir: string): Array<{ name: string; at: number }> {
  return readdirSync(dir)
    .flatMap((name) => {
      const m = NAME.exec(name);
      return m ? [{ name, at: Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}Z`) }] : [];
    })
    .sort((a, b) => a.at - b.at);
}

/**
 * When the first backup is due: at once when the newest in `dir` is older than
 * a period (or there is none), so a daemon restarted more often than `everyMs`
 * still backs up; else a period after the newest.
 */
export function firstDelay(dir: string, everyMs: number, now: number): number {
  const newest = scheduledBackups(dir).at(-1);
  return newest ? Math.max(0, newest.at + everyMs - now) : 0;
}

/** Removes the oldest scheduled backups (and their key files) beyond `keep`: the names removed. */
export function pruneBackups(dir: string, keep: number): string[] {
  const all = scheduledBackups(dir);
  const old = all.slice(0, Math.max(0, all.length - keep));
  for (const { name } of old) {
    rmSync(join(dir, name), { force: true });
    rmSync(join(dir, `${name}.key`), { force: true });
  }
  return old.map((b) => b.name);
}

/** A copy's temp name (backup-file.ts) left by a daemon killed mid-backup: never renamed, so never pruned. */
const LEFTOVER = /^\.monctl-.+\.db\.tmp-(\d+)(\.key)?$/;

/** Removes the temp files of backups that another (dead) process left in `dir`. */
export function removeLeftovers(dir: string): string[] {
  const gone = readdirSync(dir).filter((name) => {
    const m = LEFTOVER.exec(name);
    return m !== null && Number(m[1]) !== process.pid;
  });
  for (const name of gone) rmSync(join(dir, name), { force: true });
  return gone;
}
