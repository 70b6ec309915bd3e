import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * The worker's body, as text: an `eval` worker needs no file of its own, so
 * the esbuild bundle has nothing extra to ship. better-sqlite3 is required by
 * the path this module resolves (dist/ or the sources alike).
 */
const BODY = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
try {
  parentPort.postMessage(db.pragma('integrity_check').map((r) => r.integrity_check));
} finally {
  db.close();
}`;

/**
 * `PRAGMA integrity_check` of a finished copy on a worker thread: it reads the
 * whole file, seconds for a large one, and a scheduled backup must not hold the
 * daemon's event loop that long. Resolves with `ok`, or the problems found.
 */
export function integrityCheckOff(file: string): Promise<string[]> {
  const module = createRequire(import.meta.url).resolve('better-sqlite3');
  return new Promise((resolve, reject) => {
    const worker = new Worker(BODY, { eval: true, workerData: { module, file } });
    worker.once('message', (rows: string[]) => resolve(rows));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the integrity check stopped (exit ${code})`)));
  });
}
