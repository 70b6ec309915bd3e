import { defineConfig } from 'vitest/config';

// Tests run real daemons and servers on loopback: generous timeouts, and at
// most two files at once on the 2-core machines.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Installs the Debian tools the suites drive (as root), or stops the run naming them.
    globalSetup: ['test/setup/provision.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default', './test/helpers/plain-summary.ts'],
  },
});
