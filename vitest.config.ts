import { configDefaults, defineConfig } from 'vitest/config';

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
  'test/identity/**/*.test.ts',
  'test/locations/private-network.test.ts',
  'test/probes/next-runs.test.ts',
  'test/security/auth-matrix.test.ts',
  'test/security/input-integrity.test.ts',
  ...[
    'admin-key-protection',
    'credentials',
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

/**
 * Suites under POSTGRES_SUITES whose behaviour does not depend on the store:
 * they run once, on SQLite, because another suite already covers their SQL on
 * PostgreSQL (their second run cost 160 s of the 20-minute budget).
 * - status/browser, status/lighthouse, status/branding-browser, status/posted-browser: the page in Chromium. The same status
 *   world (test/status/world.ts) is read on PostgreSQL by status/page, badges,
 *   stream and edge.
 * - foundation/explorer-session: Swagger UI and the session in Chromium. The
 *   session's login, /api/me and logout run on PostgreSQL in foundation/login.
 * - security/stream-credentials: streams that end with their credential. The
 *   revocation, demotion, deletion and logout writes run on PostgreSQL in
 *   foundation/users-keys and foundation/login, and streams ended by them in
 *   cluster/stream-credentials-pods (PostgreSQL only).
 * - tunnel-admin/sse: the topology stream's framing, order, resume, heartbeat
 *   and the cut-off of a stalled reader (a flood that took longer on
 *   PostgreSQL only because each update is a round trip). Its writes run on
 *   PostgreSQL in tunnel-admin/agents and routes; the stream's SNAPSHOT, its
 *   events and a resume with Last-Event-ID in cluster/one-system.
 * - status/cli: the CLI, which runs once like the other CLI suites; the API
 *   it drives runs on PostgreSQL in status/pages-api.
 * - notifiers/chat-channels: the payloads, escaping and answers of three chat
 *   providers; the notifier rows and deliveries they use run on PostgreSQL in
 *   notifiers/delivery and the other channel suites.
 * - notifiers/pagers: PAGERDUTY, OPSGENIE and MATRIX payloads, keys and provider
 *   refusals. The same three types are routed, triggered and resolved once per
 *   incident on PostgreSQL in cluster/alerts-once (3 pods), a message that
 *   survives a restart in alerts/restart, and refusals recorded as not retried
 *   in notifiers/delivery.
 * - notifiers/email: SMTP through nodemailer (STARTTLS, TLS, AUTH, 535/550). The
 *   delivery rows it writes (ok, permanent, retryable) run on PostgreSQL in
 *   notifiers/delivery. The two saved 16 s (their PostgreSQL runs, ci6).
 */
export const STORE_INDEPENDENT = [
  'test/status/browser.test.ts',
  'test/status/branding-browser.test.ts',
  'test/status/lighthouse.test.ts',
  'test/status/posted-browser.test.ts',
  'test/status/cli.test.ts',
  'test/foundation/explorer-session.test.ts',
  'test/security/stream-credentials.test.ts',
  'test/tunnel-admin/sse.test.ts',
  'test/notifiers/chat-channels.test.ts',
  'test/notifiers/pagers.test.ts',
  'test/notifiers/email.test.ts',
  // Chromium through the OpenID provider: the sessions and users they write run on PostgreSQL in the other identity suites.
  'test/identity/*-browser.test.ts',
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
          exclude: [...configDefaults.exclude, ...STORE_INDEPENDENT],
          env: { MONCTL_TEST_DATABASE: 'postgres' },
          globalSetup: ['test/setup/provision.ts', 'test/setup/postgres.ts'],
        },
      },
    ],
  },
});
