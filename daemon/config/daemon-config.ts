import { accessSync, constants } from 'node:fs';
import type { LogFormat } from '../../src/log-format.ts';
import type { DaemonConfig } from '../config.ts';
import type { AcmeChallengeType, AcmeDnsUpdate, TlsProfile } from './values.ts';
import { type Rfc2136Setting, readTsigKey } from './rfc2136.ts';
import { ConfigError } from './file.ts';
import { identityConfigOf, insecureAllowed } from './identity-settings.ts';
import { backupConfigOf } from './backup-settings.ts';
import { type Resolved, sourceLabel } from './resolve.ts';
import { type Setting, SETTINGS, settingOf } from './settings.ts';

type HostPort = { host: string; port: number };

/**
 * The DaemonConfig of resolved settings; throws ConfigError for a half-configured TLS, an unreadable
 * PEM file, or timeouts that cannot hold together.
 */
export function toDaemonConfig(r: Resolved): DaemonConfig {
  const get = <T>(key: string) => r.values.get(key) as T;
  checkTimeouts(r);
  checkIdentity(r);
  checkBackup(r);
  const dnsUpdate = dnsUpdateOf(r);
  const config: DaemonConfig = {
    listen: { ...get<HostPort>('listen') },
    edgeListen: { ...get<HostPort>('edgeListen') },
    ...(get<HostPort | undefined>('edgeTlsListen') ? { edgeTlsListen: { ...get<HostPort>('edgeTlsListen') } } : {}),
    trustedProxies: get<string[] | undefined>('trustedProxies') ?? [],
    ...(get<string | undefined>('acmeDirectory')
      ? {
          acme: {
            directory: get<string>('acmeDirectory'),
            email: get<string | undefined>('acmeEmail'),
            challenges: get<AcmeChallengeType[]>('acmeChallenges'),
            ...dnsUpdate,
          },
        }
      : {}),
    acmeRenewAt: get<number>('acmeRenewAt'),
    dataDir: get<string>('dataDir'),
    databaseUrl: get<string | undefined>('database'),
    logLevel: get<string>('logLevel'),
    logFormat: get<LogFormat>('logFormat'),
    sseHeartbeatMs: get<number>('sseHeartbeat'),
    notifierRetryBaseMs: get<number>('notifierRetryBase'),
    alertTickMs: get<number>('alertTick'),
    sseMaxQueuedBytes: get<number>('sseMaxQueuedBytes'),
    statusStreams: {
      max: get<number>('statusStreamsMax'),
      perClient: get<number>('statusStreamsPerClient'),
      perConnection: get<number>('statusStreamsPerConnection'),
    },
    streamMaxLifetimeMs: get<number>('streamMaxLifetime'),
    checkResponses: get<boolean>('checkResponses'),
    tlsProfile: get<TlsProfile>('tlsProfile'),
    ocspRefreshMs: get<number>('ocspRefresh'),
    probes: {
      httpTimeoutMs: get<number>('httpTimeout'),
      maxBodyBytes: get<number>('maxBodyBytes'),
      concurrency: get<number>('probeConcurrency'),
      perHostConcurrency: get<number>('probePerHost'),
      historyRetentionDays: get<number>('historyRetentionDays'),
      historyMaxBytes: get<number>('historyMaxBytes'),
      schedulerEnabled: get<boolean>('scheduler'),
    },
    server: {
      requestTimeoutMs: get<number>('requestTimeout'),
      headersTimeoutMs: get<number>('headersTimeout'),
      keepAliveTimeoutMs: get<number>('keepAliveTimeout'),
      slowReaderFloor: get<number>('slowReaderFloor'),
      slowReaderWindowMs: get<number>('slowReaderWindow'),
    },
    metrics: { detail: get<'all' | 'public'>('metricsDetail'), auth: get<'none' | 'key'>('metricsAuth') },
    tunnelDials: { maxRefusals: get<number>('tunnelMaxRefusals'), windowMs: get<number>('tunnelRefusalWindow') },
    incidents: { agentGraceSeconds: get<number>('agentGraceSeconds'), certExpiryDays: get<number[]>('certExpiryDays') },
    podName: get<string | undefined>('podName'),
    podEvents: { maxEvents: get<number>('podEventsMax'), maxBytes: get<number>('podEventsMaxBytes') },
    publicUrl: get<string | undefined>('publicUrl'),
    testClock: get<boolean>('testClock'),
    pings: {
      perAddress: { perSecond: get<number>('pingRate'), burst: get<number>('pingBurst') },
      perCheck: { perSecond: get<number>('pingCheckRate'), burst: get<number>('pingCheckBurst') },
    },
    notifierTimeoutMs: get<number>('notifierTimeout'),
    adminPassword: get<string | undefined>('adminPassword'),
    identity: identityConfigOf(get),
    backup: backupConfigOf(get),
  };
  const tls = tlsOf(r);
  if (tls) config.tls = tls;
  return config;
}

/**
 * Every setting at its settings-table default, with `values` on top: the
 * config of a daemon started in-process (tests), which sets only what it needs.
 */
export function defaultDaemonConfig(values: Partial<DaemonConfig> = {}): DaemonConfig {
  const defaults = new Map(SETTINGS.flatMap((s) => (s.default ? [[s.key, s.default()] as const] : [])));
  return { ...toDaemonConfig({ values: defaults, sources: new Map(), notices: [] }), ...values };
}

/**
 * The whole request cannot be due before its headers: node refuses such a server with a raw
 * RangeError ("headersTimeout … must be <= requestTimeout"). Said here with the values' sources.
 */
function checkTimeouts(r: Resolved): void {
  const request = settingOf('requestTimeout')!;
  const headers = settingOf('headersTimeout')!;
  const requestMs = r.values.get(request.key) as number | undefined;
  const headersMs = r.values.get(headers.key) as number | undefined;
  if (requestMs === undefined || headersMs === undefined || requestMs === 0 || headersMs <= requestMs) return;
  const label = (s: Setting) => (r.sources.get(s.key) ? sourceLabel(s, r.sources.get(s.key)!) : s.key);
  throw new ConfigError([
    `${label(request)} (${requestMs} ms) is shorter than ${label(headers)} (${headersMs} ms): ` +
      'a client has the request timeout to send the whole request, headers included; raise it or lower the headers timeout',
  ]);
}

/** Single sign-on needs its issuer and client ID together; the password form off needs another way in. */
function checkIdentity(r: Resolved): void {
  const label = (key: string) => sourceLabel(settingOf(key)!, r.sources.get(key)!);
  const issuer = r.values.get('oidcIssuer') !== undefined;
  const clientId = r.values.get('oidcClientId') !== undefined;
  const issuerUrl = r.values.get('oidcIssuer') as string | undefined;
  if (issuerUrl && !issuerUrl.startsWith('https:') && !insecureAllowed(issuerUrl))
    throw new ConfigError([`${label('oidcIssuer')} must be https:// (plain http only for a provider on loopback)`]);
  if (issuer && !clientId) throw new ConfigError([`${label('oidcIssuer')} is set but oidcClientId is not: set --oidc-client-id too`]);
  for (const key of ['oidcClientId', 'oidcClientSecret', 'oidcName', 'oidcRoles'])
    if (!issuer && r.values.get(key) !== undefined && r.sources.get(key))
      throw new ConfigError([`${label(key)} is set but oidcIssuer is not: set --oidc-issuer too`]);
  if (r.values.get('passwordLogin') === false && !issuer && r.sources.get('passwordLogin'))
    throw new ConfigError([`${label('passwordLogin')} is off but no --oidc-issuer is set: nobody could log in to the web pages`]);
}

/** `--acme-dns-rfc2136` with its key file read: a file that cannot be read or parsed stops the start. */
function dnsUpdateOf(r: Resolved): { dnsUpdate?: AcmeDnsUpdate } {
  const setting = settingOf('acmeDnsRfc2136')!;
  const value = r.values.get(setting.key) as Rfc2136Setting | undefined;
  if (value === undefined) return {};
  const label = sourceLabel(setting, r.sources.get(setting.key)!);
  if (r.values.get('acmeDirectory') === undefined)
    throw new ConfigError([`${label} is set but acmeDirectory is not: DNS-01 is an ACME challenge (set --acme-directory too)`]);
  try {
    return { dnsUpdate: { server: value.server, keyName: value.keyName, ...readTsigKey(value.secretFile, value.keyName) } };
  } catch (err) {
    throw new ConfigError([`${label}: ${(err as Error).message}`]);
  }
}

function tlsOf(r: Resolved): DaemonConfig['tls'] {
  const cert = settingOf('tlsCert')!;
  const key = settingOf('tlsKey')!;
  const certFile = r.values.get(cert.key) as string | undefined;
  const keyFile = r.values.get(key.key) as string | undefined;
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined) {
    const [given, missing] = certFile === undefined ? [key, cert] : [cert, key];
    throw new ConfigError([
      `${sourceLabel(given, r.sources.get(given.key)!)} is set but ${missing.key} is not: ` +
        `HTTPS needs both ${cert.key} and ${key.key} (${missing.flag!.split(' ')[0]}, ${missing.env} or ${missing.key} in the config file)`,
    ]);
  }
  const problems = [readable(cert, certFile, r), readable(key, keyFile, r)].filter((p): p is string => p !== undefined);
  if (problems.length > 0) throw new ConfigError(problems);
  return { certFile, keyFile };
}

function readable(setting: Setting, file: string, r: Resolved): string | undefined {
  try {
    accessSync(file, constants.R_OK);
    return undefined;
  } catch (err) {
    return `${sourceLabel(setting, r.sources.get(setting.key)!)}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
  }
}

/** Scheduled backups copy the SQLite file: on PostgreSQL they would silently never run, so the start stops. */
function checkBackup(r: Resolved): void {
  if (r.values.get('backupDir') === undefined || r.values.get('database') === undefined) return;
  throw new ConfigError([
    `${sourceLabel(settingOf('backupDir')!, r.sources.get('backupDir')!)} is for a SQLite store: on PostgreSQL schedule pg_dump instead (README, Backup and restore)`,
  ]);
}
