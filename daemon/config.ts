import type { LogFormat } from '../src/log-format.ts';
import type { AcmeChallengeType, AcmeDnsUpdate, TlsProfile } from './config/values.ts';
import type { ProbeConfig } from './config/probe-config.ts';
import type { Role } from '../src/api/schemas/auth.ts';

/**
 * The daemon's settings once flags, `MONCTL_*` env vars and the config file are
 * resolved (daemon/config/). Every setting with a default in the settings
 * table (daemon/config/settings.ts) is present, so no module applies a default
 * of its own; the optional fields are the settings that are off when unset. A
 * daemon started in-process (tests) takes defaultDaemonConfig() with its own values.
 */
export interface DaemonConfig {
  listen: { host: string; port: number };
  edgeListen: { host: string; port: number };
  /** The HTTPS edge (`--edge-tls-listen`); none when absent. Its port is the bound one once listening. */
  edgeTlsListen?: { host: string; port: number };
  /** Proxies whose X-Forwarded-For the edge believes (CIDR blocks); empty when unset. */
  trustedProxies: string[];
  /** ACME (`--acme-directory`): certificates for route hostnames; off when absent. `dnsUpdate`: DNS-01 through RFC 2136, wildcards need it. */
  acme?: { directory: string; email?: string; challenges: AcmeChallengeType[]; dnsUpdate?: AcmeDnsUpdate };
  /** ACME certificates are renewed once this fraction of their lifetime has passed (shown for ACME certificates even with ACME off). */
  acmeRenewAt: number;
  dataDir: string;
  /** PostgreSQL shared by several pods (`--database`); SQLite in dataDir when absent. */
  databaseUrl?: string;
  logLevel: string;
  logFormat: LogFormat;
  /** Milliseconds between SSE `: ping` comments. */
  sseHeartbeatMs: number;
  /** The first wait before a failed notification is retried (doubling from there). */
  notifierRetryBaseMs: number;
  /** Period of the alert routing loop; dispatch runs every half tick, reminders every 5 ticks. */
  alertTickMs: number;
  /** Unsent bytes an SSE subscriber may have before it is cut off. */
  sseMaxQueuedBytes: number;
  /** Status pages' live streams: at once, per client address (IPv6 /64), per connection. */
  statusStreams: { max: number; perClient: number; perConnection: number };
  /** An authenticated stream ends after this long at most, and the client reconnects. */
  streamMaxLifetimeMs: number;
  /** Validate every response against its schema (tests turn it on). */
  checkResponses: boolean;
  /** Probe engine tunables (daemon/config/probe-config.ts). */
  probes: ProbeConfig;
  /** Timeouts of both listeners in milliseconds, and the slow-reader floor (bytes per second) over its window. */
  server: {
    requestTimeoutMs: number;
    headersTimeoutMs: number;
    keepAliveTimeoutMs: number;
    slowReaderFloor: number;
    slowReaderWindowMs: number;
  };
  /** HTTPS: PEM files, both or neither (checked when the config is resolved). */
  tls?: { certFile: string; keyFile: string };
  /** Protocols, ciphers and curves of every TLS listener and context (daemon/http/tls-profile.ts). */
  tlsProfile: TlsProfile;
  /** OCSP stapling: the longest time between fetches of one certificate's response. */
  ocspRefreshMs: number;
  /** The pod's name among daemons sharing a database; `<hostname>:<API port>` when absent. */
  podName?: string;
  /** Pods: events of cluster-wide channels that may wait in each direction. */
  podEvents: { maxEvents: number; maxBytes: number };
  /** `/actuator/prometheus`: which per-resource series it shows, and whether it needs a credential. */
  metrics: { detail: 'all' | 'public'; auth: 'none' | 'key' };
  /** Bad-token agent dials per source within windowMs before 429. */
  tunnelDials: { maxRefusals: number; windowMs: number };
  /** The URL people reach the daemon at (`--public-url`), without a trailing slash; notifications link to it. */
  publicUrl?: string;
  /** Tests: the clock of push deadlines is a TestClock that ADMIN moves forward (daemon/util/clock.ts). */
  testClock: boolean;
  /** Push pings' rate limits: per client address and per check (tokens per second, bucket size). */
  pings: { perAddress: { perSecond: number; burst: number }; perCheck: { perSecond: number; burst: number } };
  /** Hard limit of one notification delivery attempt. */
  notifierTimeoutMs: number;
  /** Incidents: an agent's grace before it counts as down, CERT_EXPIRING thresholds in days. */
  incidents: { agentGraceSeconds: number; certExpiryDays: number[] };
  /** Password of user admin at bootstrap; MONCTL_ADMIN_PASSWORD or a random one when absent. */
  adminPassword?: string;
  /** Sign-in: single sign-on, the password form, two-factor login, route sessions. */
  identity: IdentityConfig;
  /** Scheduled backups (SQLite): where, how often, how many are kept. */
  backup: BackupConfig;
}

/** `HOST:PORT`, `[v6]:PORT` or `:PORT`; throws with a readable message. */
export function parseHostPort(text: string, flag: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) throw new Error(`${flag} must be HOST:PORT (got "${text}")`);
  return { host: match[1] ?? (match[2] || '0.0.0.0'), port };
}

/** What the daemon's sign-in accepts (docs/API.md#single-sign-on, #two-factor-login). */
export interface IdentityConfig {
  /** OpenID Connect single sign-on; absent: none (the login page has only the password form). */
  oidc?: OidcConfig;
  /** The username/password form of /login (and `monctl login --username`); off leaves SSO and API keys. */
  passwordLogin: boolean;
  /** Who must have a TOTP second factor to log in with a password: nobody, ADMIN users, or everyone. */
  twoFactorRequired: 'off' | 'admin' | 'all';
  /** How long a route's SSO session lasts when the route does not say (`auth: oidc`). */
  routeSessionMs: number;
}

export interface OidcConfig {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  /** What the button says: "Sign in with <name>". */
  name: string;
  scopes: string[];
  /** `create`: a user is created on first login; `existing`: only users that exist (or are linked) may. */
  users: 'create' | 'existing';
  /** The claim whose value is the username of a created user (email, preferred_username, …). */
  usernameClaim: string;
  /** The claim holding the groups (a list of strings, or one string). */
  groupsClaim: string;
  /** group → role, first match in order; re-evaluated at each login. */
  roles: Array<{ group: string; role: Role }>;
  /** The role when no group maps one; `none` refuses the login. */
  defaultRole: Role | 'none';
}

/** Scheduled backups of the SQLite database; `dir` absent: none. */
export interface BackupConfig {
  dir?: string;
  everyMs: number;
  keep: number;
}
