import type { Migration, MigrationProvider } from 'kysely';
import * as auth from './0001-auth.ts';
import * as monitoring from './0002-monitoring.ts';
import * as tunnel from './0003-tunnel.ts';

/**
 * Versioned migrations, run in name order at start. Listed statically (not
 * read from the folder) so that nothing depends on the working directory.
 * Add a new file with the next number; never edit one that has shipped.
 */
const migrations: Record<string, Migration> = {
  '0001-auth': auth,
  '0002-monitoring': monitoring,
  '0003-tunnel': tunnel,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
