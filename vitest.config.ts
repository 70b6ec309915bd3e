import { defineConfig } from 'vitest/config';

/**
 * One suite, two backends: the API-level suites run a second time with every
 * daemon on its own database of a throw-away PostgreSQL cluster
 * (test/setup/postgres.ts). Suites about SQLite itself (the file, its lock,
 * corruption, disk full), the CLI, the agent and the data plane run once.
 */
export const POSTGRES_SUITES = [
  'test/monitoring/**/*.test.ts',
  'test/tunnel-admin/**/*.test.ts',
  'test/alerts/**/*.test.ts',
  'test/status/**/*.test.ts',
  'test/notifiers/**/*.test.ts',
  'test/cluster/**/*.test.ts',
  'test/push/**/*.test.ts',
  'test/locations/private-network.test.ts',
  'test/security/auth-matrix.test.ts',
  'test/security/input-integrity.test.ts',
  'test/security/stream-credentials.test.ts',
  ...[
    'admin-key-protection',
    'credentials',
    'explorer-session',
    'health-details',
    'login',
    'metrics-visibility',
    'metrics',
    'problems',
    'restart',
    'shutdown',
    'users-keys',
  ].map((name) => `test/foundation/${name}.test.ts`),
];

// Tests run real daemons and servers on loopback: generous timeouts, and at
// most two files at once on the 2-core machines.
export default defineConfig({
  test: {
    // Installs the Debian tools the suites drive (as root), or stops the run naming them.
    globalSetup: ['test/setup/provision.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default', './test/helpers/plain-summary.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'sqlite', include: ['test/**/*.test.ts'], exclude: ['test/cluster/**'] },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: POSTGRES_SUITES,
          env: { MONCTL_TEST_DATABASE: 'postgres' },
          globalSetup: ['test/setup/provision.ts', 'test/setup/postgres.ts'],
        },
      },
    ],
  },
});
