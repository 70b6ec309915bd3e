import type { Static } from '@sinclair/typebox';
import type { AdminResource } from '../../src/api/schemas/monitoring.ts';
import { OPTION_FIELD } from '../commands/check-option-flags.ts';
import type { Placeholders } from './secrets.ts';

type Resource = Static<typeof AdminResource>;
type Obj = Record<string, unknown>;

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const names = (list: Array<{ name: string }>) => list.map((x) => x.name).sort(byName);

/**
 * One `resources:` entry as apply takes it (cli/apply/spec.ts). The schedule and alerting settings
 * are always written (their defaults are the daemon's flags, which may differ on another install);
 * lists, request fields and flags only when set, so a file stays readable and a field left out
 * keeps meaning "the default". Secrets become placeholders.
 */
export function resourceEntry(r: Resource, env: Placeholders): Obj {
  const push = r.resourceType === 'PUSH';
  const out: Obj = { name: r.name, type: r.resourceType, target: r.target };
  if (!push) out.intervalSeconds = r.intervalSeconds;
  out.failureThreshold = r.failureThreshold;
  out.successThreshold = r.successThreshold;
  out.severity = r.severity;
  if (!r.active) out.active = false;
  if (r.groups.length) out.groups = names(r.groups);
  if (r.dependsOn.length) out.dependsOn = names(r.dependsOn);
  if (!push) {
    if (r.skipTLS) out.skipTLS = true;
    if (r.recursive) out.recursive = true;
    const locations = r.locations ?? ['daemon'];
    if (locations.join('\n') !== 'daemon') {
      out.locations = locations;
      out.quorum = r.quorum;
    }
  }
  if (r.conditions.length) out.conditions = r.conditions;
  if (push && r.push) {
    if (r.push.cron !== null) {
      out.cron = r.push.cron;
      if (r.push.timezone !== null) out.timezone = r.push.timezone;
    } else if (r.push.periodSeconds !== null) out.periodSeconds = r.push.periodSeconds;
    out.graceSeconds = r.push.graceSeconds;
  }
  if (r.resourceType === 'HTTP') Object.assign(out, httpFields(r, env));
  else if (!push) {
    if (r.timeoutSeconds !== null) out.timeoutSeconds = r.timeoutSeconds;
    if (r.upsideDown) out.upsideDown = true;
  }
  const field = OPTION_FIELD[r.resourceType];
  const options = field ? (r as unknown as Obj)[field] : undefined;
  if (options && typeof options === 'object') out[field] = options;
  return out;
}

/** The request of an HTTP check (docs/API.md#request-fields), its secrets as placeholders. */
function httpFields(r: Resource, env: Placeholders): Obj {
  const out: Obj = { method: r.method };
  if (Object.keys(r.headers).length) out.headers = sortedKeys(r.headers);
  if (r.secrets.headers.length)
    out.secretHeaders = Object.fromEntries([...r.secrets.headers].sort(byName).map((h) => [h, env.ref('RESOURCE', r.name, 'HEADER', h)]));
  if (r.body !== null) out.body = r.body;
  if (r.contentType !== null) out.contentType = r.contentType;
  if (r.auth?.type === 'basic') out.auth = { type: 'basic', username: r.auth.username, password: env.ref('RESOURCE', r.name, 'PASSWORD') };
  else if (r.auth?.type === 'bearer') out.auth = { type: 'bearer', token: env.ref('RESOURCE', r.name, 'TOKEN') };
  if (r.secrets.clientCert) {
    out.clientCert = env.ref('RESOURCE', r.name, 'CLIENT_CERT');
    out.clientKey = env.ref('RESOURCE', r.name, 'CLIENT_KEY');
  }
  out.followRedirects = r.followRedirects;
  out.expectStatus = r.expectStatus;
  if (r.timeoutSeconds !== null) out.timeoutSeconds = r.timeoutSeconds;
  if (r.upsideDown) out.upsideDown = true;
  return out;
}

/** A mapping with its keys in order, so that two exports compare line by line. */
export function sortedKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => byName(a, b)));
}
