import { defaultDataDir } from '../../src/config/paths.ts';
import { defaultLogFormat, LOG_FORMATS } from '../../src/log-format.ts';
import { DEFAULT_STREAM_MAX_LIFETIME_MS } from './stream-lifetime.ts';
import { DEFAULT_RELAY_LIMITS } from './relay-limits.ts';
import { DEFAULT_AGENT_GRACE_SECONDS, DEFAULT_CERT_EXPIRY_DAYS } from './incident-defaults.ts';
import { defaultProbeConfig } from './probe-config.ts';
import { normaliseCidr } from '../util/cidr.ts';
import { ACME_CHALLENGE_TYPES, DIAL_LIMIT_DEFAULTS, STATUS_STREAM_LIMITS, TLS_PROFILES } from './values.ts';
import * as t from './types.ts';
import { rfc2136 } from './rfc2136.ts';

/**
 * One row per daemon setting: the single source of the commander options, the
 * config-file keys and their validation, `--print-config`, and the README table.
 * The file key is the flag in camelCase; the env var is `MONCTL_<FLAG>` unless
 * a row keeps an older name. A new setting is one new row (and the line of
 * daemon-config.ts that puts it into DaemonConfig).
 */
export interface Setting<T = unknown> {
  /** The config-file key, and commander's attribute name for the flag. */
  key: string;
  /** `--name <arg>`; absent for a secret, which must not appear in `ps` output (the database URL has one: it need not hold the password). */
  flag?: string;
  env: string;
  type: t.ValueType<T>;
  /** The value when nothing sets it; absent means unset (an optional feature). */
  default?: () => T;
  /** What help and --print-config say about an absent default. */
  unsetMeans?: string;
  /** What --help says the default is, when it depends on where the daemon runs (the value help would show is only this run's). */
  defaultHelp?: string;
  /** An older env var name, still read (after `env`), with a deprecation notice on stderr. */
  deprecatedEnv?: string;
  help: string;
  /** Masked by --print-config (its type's format masks it) and commented out there. */
  secret?: boolean;
}

const row = <T>(s: Setting<T>): Setting => s as Setting;

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export const METRICS_DETAILS = ['all', 'public'] as const;
export const METRICS_AUTHS = ['none', 'key'] as const;

export const SETTINGS: readonly Setting[] = [
  row({
    key: 'listen',
    flag: '--listen <host:port>',
    env: 'MONCTL_LISTEN',
    type: t.hostPort,
    default: () => ({ host: '0.0.0.0', port: 8080 }),
    help: 'REST, SSE, login, explorer, metrics, agent tunnel',
  }),
  row({
    key: 'edgeListen',
    flag: '--edge-listen <host:port>',
    env: 'MONCTL_EDGE_LISTEN',
    type: t.hostPort,
    default: () => ({ host: '0.0.0.0', port: 8081 }),
    help: 'public entry for HTTP routes',
  }),
  row({
    key: 'edgeTlsListen',
    flag: '--edge-tls-listen <host:port>',
    env: 'MONCTL_EDGE_TLS_LISTEN',
    type: t.hostPort,
    unsetMeans: 'no HTTPS edge',
    help: 'public HTTPS entry for HTTP routes and status pages (certificates by SNI, HTTP/2)',
  }),
  row({
    key: 'trustedProxies',
    flag: '--trusted-proxies <cidrs>',
    env: 'MONCTL_TRUSTED_PROXIES',
    type: t.cidrList((c) => normaliseCidr(c) !== undefined),
    unsetMeans: 'none: the peer is the client',
    help: 'proxies in front of the edge whose X-Forwarded-For names the client (ipAllow, ipDeny, rateLimit, the access log)',
  }),
  row({
    key: 'acmeDirectory',
    flag: '--acme-directory <url>',
    env: 'MONCTL_ACME_DIRECTORY',
    type: t.httpUrl,
    unsetMeans: 'no ACME',
    help: 'ACME directory URL (e.g. https://acme-v02.api.letsencrypt.org/directory): route hostnames get certificates by themselves',
  }),
  row({
    key: 'acmeEmail',
    flag: '--acme-email <email>',
    env: 'MONCTL_ACME_EMAIL',
    type: t.email,
    unsetMeans: 'no contact',
    help: 'contact address of the ACME account (expiry notices)',
  }),
  row({
    key: 'acmeChallenges',
    flag: '--acme-challenges <types>',
    env: 'MONCTL_ACME_CHALLENGES',
    type: t.someOf(ACME_CHALLENGE_TYPES),
    // dns-01 only when listed: a plain name validates faster on the edge than through a DNS update.
    default: () => ['http-01', 'tls-alpn-01'],
    help: 'ACME challenge types in order of preference: http-01 (plain edge), tls-alpn-01 (TLS edge), dns-01 (--acme-dns-rfc2136)',
  }),
  row({
    key: 'acmeDnsRfc2136',
    flag: '--acme-dns-rfc2136 <server,keyname,secret-file>',
    env: 'MONCTL_ACME_DNS_RFC2136',
    type: rfc2136,
    unsetMeans: 'no DNS-01: no wildcard certificates',
    help: 'ACME DNS-01 through RFC 2136 updates signed with a TSIG key: the DNS server (port 53 unless given), the key name, a file with the base64 secret or a BIND key clause',
  }),
  row({
    key: 'acmeRenewAt',
    flag: '--acme-renew-at <fraction>',
    env: 'MONCTL_ACME_RENEW_AT',
    type: t.fraction,
    default: () => 2 / 3,
    help: 'ACME certificates are renewed once this fraction of their lifetime has passed',
  }),
  row({
    key: 'dataDir',
    flag: '--data-dir <dir>',
    env: 'MONCTL_DATA_DIR',
    type: t.path,
    default: () => defaultDataDir(),
    help: 'SQLite database, secrets, bootstrap key',
  }),
  row({
    key: 'database',
    flag: '--database <url>',
    env: 'MONCTL_DATABASE_URL',
    type: t.databaseUrl,
    secret: true,
    unsetMeans: 'SQLite in --data-dir',
    help: 'PostgreSQL 15+ shared by several daemons (pods): postgres://user@host:5432/db (a password is better in MONCTL_DATABASE_URL, PGPASSWORD or ~/.pgpass than on the command line)',
  }),
  row({
    key: 'logLevel',
    flag: '--log-level <level>',
    env: 'MONCTL_LOG_LEVEL',
    type: t.oneOf(LOG_LEVELS),
    default: () => 'info',
    help: 'log level',
  }),
  row({
    key: 'logFormat',
    flag: '--log-format <format>',
    env: 'MONCTL_LOG_FORMAT',
    type: t.oneOf(LOG_FORMATS),
    default: () => defaultLogFormat(),
    defaultHelp: 'pretty on a terminal, else json',
    help: 'json (one object per line) or pretty (for people)',
  }),
  row({
    key: 'tlsCert',
    flag: '--tls-cert <file>',
    env: 'MONCTL_TLS_CERT',
    type: t.path,
    unsetMeans: 'plain HTTP',
    help: 'PEM certificate (chain) to serve HTTPS; needs --tls-key',
  }),
  row({
    key: 'tlsKey',
    flag: '--tls-key <file>',
    env: 'MONCTL_TLS_KEY',
    type: t.path,
    unsetMeans: 'plain HTTP',
    help: 'PEM private key of --tls-cert',
  }),
  row({
    key: 'tlsProfile',
    flag: '--tls-profile <profile>',
    env: 'MONCTL_TLS_PROFILE',
    type: t.oneOf(TLS_PROFILES),
    default: () => 'intermediate',
    help: "protocols and ciphers of every TLS listener (HTTPS edge, API with --tls-cert), after Mozilla's profiles: intermediate (TLS 1.2 with ECDHE/DHE and AEAD only, and TLS 1.3) or modern (TLS 1.3 only)",
  }),
  row({
    key: 'ocspRefresh',
    flag: '--ocsp-refresh <duration>',
    env: 'MONCTL_OCSP_REFRESH',
    type: t.duration,
    default: () => 3_600_000,
    help: 'OCSP stapling: the stapled response of a certificate with an OCSP URL is fetched again after this long at most (sooner when halfway to its nextUpdate)',
  }),
  row({
    key: 'probeConcurrency',
    flag: '--probe-concurrency <n>',
    env: 'MONCTL_PROBE_CONCURRENCY',
    type: t.positiveInteger,
    default: () => defaultProbeConfig().concurrency,
    help: 'checks running at once, all resources together',
  }),
  row({
    key: 'probePerHost',
    flag: '--probe-per-host <n>',
    env: 'MONCTL_PROBE_PER_HOST',
    type: t.positiveInteger,
    default: () => defaultProbeConfig().perHostConcurrency,
    help: 'checks running at once against one host:port',
  }),
  // MONCTL_HTTP_TIMEOUT_MS took durations (`7s`) despite its suffix: the name now says what it takes, the old one still works.
  row({
    key: 'httpTimeout',
    flag: '--http-timeout <duration>',
    env: 'MONCTL_HTTP_TIMEOUT',
    deprecatedEnv: 'MONCTL_HTTP_TIMEOUT_MS',
    type: t.duration,
    default: () => defaultProbeConfig().httpTimeoutMs,
    help: 'timeout of a whole HTTP or DOCKER check, and of a TCP connect',
  }),
  row({
    key: 'maxBodyBytes',
    flag: '--max-body-bytes <bytes>',
    env: 'MONCTL_MAX_BODY_BYTES',
    type: t.positiveInteger,
    default: () => defaultProbeConfig().maxBodyBytes,
    help: 'most bytes of a response body read (after decoding) for a [BODY] condition; a longer body fails it',
  }),
  row({
    key: 'historyRetentionDays',
    flag: '--history-retention-days <days>',
    env: 'MONCTL_HISTORY_RETENTION_DAYS',
    type: t.positiveNumber,
    default: () => defaultProbeConfig().historyRetentionDays,
    help: 'raw check history older than this is deleted (rollups stay)',
  }),
  row({
    key: 'scheduler',
    flag: '--scheduler <on|off>',
    env: 'MONCTL_SCHEDULER',
    type: t.onOff,
    default: () => defaultProbeConfig().schedulerEnabled,
    help: 'run scheduled checks (off: only on-demand checks)',
  }),
  row({
    key: 'sseHeartbeat',
    flag: '--sse-heartbeat <duration>',
    env: 'MONCTL_SSE_HEARTBEAT_MS',
    type: t.duration,
    default: () => 15_000,
    help: 'time between `: ping` comments on event streams',
  }),
  row({
    key: 'sseMaxQueuedBytes',
    flag: '--sse-max-queued-bytes <bytes>',
    env: 'MONCTL_SSE_MAX_QUEUED_BYTES',
    type: t.positiveInteger,
    default: () => 512 * 1024,
    help: 'unsent bytes a stream subscriber may have before it is cut off',
  }),
  row({
    key: 'statusStreamsMax',
    flag: '--status-streams-max <n>',
    env: 'MONCTL_STATUS_STREAMS_MAX',
    type: t.positiveInteger,
    default: () => STATUS_STREAM_LIMITS.max,
    help: 'status pages: live streams open at once, all pages and visitors together; more get 503',
  }),
  row({
    key: 'statusStreamsPerClient',
    flag: '--status-streams-per-client <n>',
    env: 'MONCTL_STATUS_STREAMS_PER_CLIENT',
    type: t.positiveInteger,
    default: () => STATUS_STREAM_LIMITS.perClient,
    help: "status pages: live streams of one client address (IPv6: its /64); a new one ends that client's oldest",
  }),
  row({
    key: 'statusStreamsPerConnection',
    flag: '--status-streams-per-connection <n>',
    env: 'MONCTL_STATUS_STREAMS_PER_CONNECTION',
    type: t.positiveInteger,
    default: () => STATUS_STREAM_LIMITS.perConnection,
    help: "status pages: live streams of one HTTP/2 connection; a new one ends that connection's oldest",
  }),
  row({
    key: 'streamMaxLifetime',
    flag: '--stream-max-lifetime <duration>',
    env: 'MONCTL_STREAM_MAX_LIFETIME',
    type: t.duration,
    default: () => DEFAULT_STREAM_MAX_LIFETIME_MS,
    help: 'an event stream opened with a credential ends after this long at most (90 to 100 % of it), and the client reconnects and is authorized again',
  }),
  row({
    key: 'requestTimeout',
    flag: '--request-timeout <duration>',
    env: 'MONCTL_REQUEST_TIMEOUT',
    type: t.duration,
    default: () => 30_000,
    help: 'time a client has to send a whole request',
  }),
  row({
    key: 'headersTimeout',
    flag: '--headers-timeout <duration>',
    env: 'MONCTL_HEADERS_TIMEOUT',
    type: t.duration,
    default: () => 10_000,
    help: 'time a client has to send the request headers',
  }),
  row({
    key: 'keepAliveTimeout',
    flag: '--keep-alive-timeout <duration>',
    env: 'MONCTL_KEEP_ALIVE_TIMEOUT',
    type: t.duration,
    default: () => 5_000,
    help: 'idle time before a keep-alive connection is closed',
  }),
  row({
    key: 'slowReaderFloor',
    flag: '--slow-reader-floor <bytes>',
    env: 'MONCTL_SLOW_READER_FLOOR',
    type: t.positiveInteger,
    default: () => 1024,
    help: 'bytes per second a client of the API or edge listener must read while a response waits on it',
  }),
  row({
    key: 'slowReaderWindow',
    flag: '--slow-reader-window <duration>',
    env: 'MONCTL_SLOW_READER_WINDOW',
    type: t.duration,
    default: () => 20_000,
    help: 'window over which --slow-reader-floor is measured; a slower client is disconnected',
  }),
  row({
    key: 'podName',
    flag: '--pod-name <name>',
    env: 'MONCTL_POD_NAME',
    type: t.string,
    unsetMeans: '<hostname>:<API port>',
    help: "this daemon's name among the pods of one database",
  }),
  row({
    key: 'podEventsMax',
    flag: '--pod-events-max <n>',
    env: 'MONCTL_POD_EVENTS_MAX',
    type: t.positiveInteger,
    default: () => DEFAULT_RELAY_LIMITS.maxEvents,
    help: 'pods: events waiting to be announced to the other pods (and, arrived, to be delivered) before the excess is shed and the channels restart',
  }),
  row({
    key: 'podEventsMaxBytes',
    flag: '--pod-events-max-bytes <bytes>',
    env: 'MONCTL_POD_EVENTS_MAX_BYTES',
    type: t.positiveInteger,
    default: () => DEFAULT_RELAY_LIMITS.maxBytes,
    help: 'pods: the same bound in bytes of event JSON',
  }),
  row({
    key: 'checkResponses',
    flag: '--check-responses <on|off>',
    env: 'MONCTL_CHECK_RESPONSES',
    type: t.onOff,
    default: () => false,
    help: 'validate every response against its schema (tests)',
  }),
  row({
    key: 'metricsDetail',
    flag: '--metrics-detail <all|public>',
    env: 'MONCTL_METRICS_DETAIL',
    type: t.oneOf(METRICS_DETAILS),
    default: () => 'all',
    help: 'per-resource series on /actuator/prometheus: all, or only of PUBLIC resources (no HIDDEN or AUTHENTICATED ones)',
  }),
  row({
    key: 'metricsAuth',
    flag: '--metrics-auth <none|key>',
    env: 'MONCTL_METRICS_AUTH',
    type: t.oneOf(METRICS_AUTHS),
    default: () => 'none',
    help: 'none: /actuator/prometheus is public; key: it needs a valid API key (ADMIN or USER) or a session, else 401',
  }),
  row({
    key: 'tunnelMaxRefusals',
    flag: '--tunnel-max-refusals <n>',
    env: 'MONCTL_TUNNEL_MAX_REFUSALS',
    type: t.positiveInteger,
    default: () => DIAL_LIMIT_DEFAULTS.maxRefusals,
    help: 'agent dials with a bad token from one address (IPv6: its /64) before its dials get 429',
  }),
  row({
    key: 'tunnelRefusalWindow',
    flag: '--tunnel-refusal-window <duration>',
    env: 'MONCTL_TUNNEL_REFUSAL_WINDOW',
    type: t.duration,
    default: () => DIAL_LIMIT_DEFAULTS.windowMs,
    help: 'window of --tunnel-max-refusals, and interval of the refusal summaries in the log',
  }),
  row({
    key: 'publicUrl',
    flag: '--public-url <url>',
    env: 'MONCTL_PUBLIC_URL',
    type: t.httpUrl,
    unsetMeans: 'no link in notifications',
    help: 'the URL people reach this daemon at (behind any proxy); notifications link to it',
  }),
  row({
    key: 'testClock',
    flag: '--test-clock <on|off>',
    env: 'MONCTL_TEST_CLOCK',
    type: t.onOff,
    default: () => false,
    help: 'for tests only: ADMIN may move the clock of push deadlines forward (POST /admin/api/test-clock)',
  }),
  row({
    key: 'pingRate',
    flag: '--ping-rate <per-second>',
    env: 'MONCTL_PING_RATE',
    type: t.positiveNumber,
    default: () => 50,
    help: 'push pings one client address may send per second, on average (429 beyond)',
  }),
  row({
    key: 'pingBurst',
    flag: '--ping-burst <count>',
    env: 'MONCTL_PING_BURST',
    type: t.positiveInteger,
    default: () => 200,
    help: 'push pings one client address may send at once, above `pingRate`',
  }),
  row({
    key: 'pingCheckRate',
    flag: '--ping-check-rate <per-second>',
    env: 'MONCTL_PING_CHECK_RATE',
    type: t.positiveNumber,
    default: () => 5,
    help: 'pings one push check takes per second, on average, from all clients (429 beyond)',
  }),
  row({
    key: 'pingCheckBurst',
    flag: '--ping-check-burst <count>',
    env: 'MONCTL_PING_CHECK_BURST',
    type: t.positiveInteger,
    default: () => 20,
    help: 'pings one push check takes at once, above `pingCheckRate`',
  }),
  row({
    key: 'notifierTimeout',
    flag: '--notifier-timeout <duration>',
    env: 'MONCTL_NOTIFIER_TIMEOUT',
    type: t.duration,
    default: () => 10_000,
    help: 'hard limit of one notification delivery attempt (connect, send, answer)',
  }),
  row({
    key: 'notifierRetryBase',
    flag: '--notifier-retry-base <duration>',
    env: 'MONCTL_NOTIFIER_RETRY_BASE',
    type: t.duration,
    default: () => 5_000,
    help: 'first wait before a failed notification is retried; it doubles on each retry (with jitter, at most 30 min, for 24 h)',
  }),
  row({
    key: 'alertTick',
    flag: '--alert-tick <duration>',
    env: 'MONCTL_ALERT_TICK',
    type: t.duration,
    default: () => 1_000,
    help: 'period of alert routing; delivery runs every half tick, reminders every 5 ticks (tests shorten it)',
  }),
  row({
    key: 'agentGraceSeconds',
    flag: '--agent-grace-seconds <seconds>',
    env: 'MONCTL_AGENT_GRACE_SECONDS',
    type: t.positiveInteger,
    default: () => DEFAULT_AGENT_GRACE_SECONDS,
    help: 'a tunnel agent DISCONNECTED for longer than this opens an incident (AGENT_DOWN)',
  }),
  row({
    key: 'certExpiryDays',
    flag: '--cert-expiry-days <days,...>',
    env: 'MONCTL_CERT_EXPIRY_DAYS',
    type: t.positiveIntegerList,
    default: () => [...DEFAULT_CERT_EXPIRY_DAYS],
    help: 'days before an HTTPS certificate expires at which CERT_EXPIRING fires, once each',
  }),
  row({
    key: 'adminPassword',
    env: 'MONCTL_ADMIN_PASSWORD',
    type: t.password,
    secret: true,
    unsetMeans: 'a random one, printed once',
    help: 'password of user admin, created on the first start',
  }),
];

export function settingOf(key: string): Setting | undefined {
  return SETTINGS.find((s) => s.key === key);
}

/** The flag's name without its argument: `--edge-listen`. */
export const flagName = (s: Setting) => s.flag?.split(' ')[0];
