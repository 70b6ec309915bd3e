import type { TestProject } from 'vitest/node';
import { startPgCluster } from '../helpers/postgres.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The `postgres` database of the run's throw-away cluster (superuser, trust auth on 127.0.0.1). */
    pgAdminUrl: string;
  }
}

/**
 * vitest global setup of the `postgres` project: one throw-away PostgreSQL
 * cluster for the whole run (test/helpers/postgres.ts); every daemon the
 * tests start gets its own database on it (test/helpers/test-database.ts).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await startPgCluster();
  project.provide('pgAdminUrl', cluster.url('postgres'));
  return () => cluster.stop();
}
