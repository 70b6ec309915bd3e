import { ALERT_EVENT_KINDS, RESOURCE_TYPES } from '../../src/api/kinds.ts';
import { AFFINITIES, POOL_POLICIES } from '../../src/api/schemas/route-pools.ts';
import { NOTIFIER_FIELDS, NOTIFIER_TYPES, SEVERITIES } from '../../src/notifier-fields.ts';

/**
 * The fields of a `monctl apply -f` file, one table: the validators take the
 * allowed names from it, `monctl apply --help-fields` prints it, and the
 * README's reference is its output (test/cli/apply-fields.test.ts compares
 * them), so the three cannot drift apart.
 */
interface Field {
  name: string;
  /** The value: a type, or the values it takes. */
  value: string;
  help: string;
  required?: boolean;
}

interface Section {
  key: 'groups' | 'resources' | 'announcements' | 'notifiers' | 'alertRules' | 'maintenance' | 'statusPages' | 'agents' | 'routes';
  help: string;
  fields: Field[];
  /** Notifiers: the fields of each type (`url*`, `token (secret)`), flat beside name and type. */
  perType?: Record<string, string[]>;
}

const f = (name: string, value: string, help: string, required = false): Field => ({ name, value, help, required });

export const APPLY_SECTIONS: readonly Section[] = [
  {
    key: 'groups',
    help: 'resource groups, by name',
    fields: [f('name', 'string', 'the group', true), f('visibility', 'PUBLIC | AUTHENTICATED | HIDDEN', 'who sees its resources')],
  },
  {
    key: 'resources',
    help: 'monitored resources, by name',
    fields: [
      f('name', 'string', 'the resource', true),
      f('type', RESOURCE_TYPES.join(' | '), 'what is checked; PUSH waits for pings (resourceType is accepted too)', true),
      f(
        'target',
        'string',
        'HTTP: an http(s) URL; TCP, TLS, UDP, GRPC, SSH: host:port; DOCKER: an image reference; DNS: a name; PING: a host; WEBSOCKET: a ws(s):// URL; PUSH: the slug (optional)',
        true,
      ),
      f('intervalSeconds', 'integer 10..86400', 'seconds between checks'),
      f('groups', 'list of group names', 'the groups it is in'),
      f('skipTLS', 'boolean', 'accept self-signed certificates'),
      f('recursive', 'boolean', 'DOCKER: check every repository under a namespace'),
      f('active', 'boolean', 'checked on schedule (default true)'),
      f('failureThreshold', 'integer 1..100', 'failed checks in a row that open an incident (default 3)'),
      f('successThreshold', 'integer 1..100', 'good checks in a row that resolve it (default 1)'),
      f('locations', 'list of names', 'where it is checked: daemon and agent names (default [daemon])'),
      f('quorum', 'any | majority | all', 'how the locations decide (default majority)'),
      f('severity', SEVERITIES.join(' | '), 'how much its failure matters; alert rules match on it (default critical)'),
      f('dependsOn', 'list of resource names', 'resources it depends on: their incidents hold its alerts back ([] removes them)'),
      f('conditions', 'list of strings', "what up means, in Gatus's syntax: '[BODY].status == UP' (all must hold; [] removes them)"),
      f('timeoutSeconds', 'integer 1..120 | null', "how long a check may take (null: the daemon's --http-timeout)"),
      f('upsideDown', 'boolean', 'AVAILABLE exactly when the check would otherwise fail'),
      f('method', 'GET | HEAD | POST | PUT | PATCH | DELETE | OPTIONS', 'HTTP: the request method (default GET)'),
      f('headers', 'mapping name: value', 'HTTP: request headers, shown in reads (the file lists them all)'),
      f('secretHeaders', 'mapping name: ${ENV_VAR}', 'HTTP: headers whose values are secrets, sent on every apply'),
      f('body', 'string | null', 'HTTP: the request body, at most 64 KiB'),
      f('contentType', 'string | null', "HTTP: the body's content type (default text/plain)"),
      f('auth', '{type: basic, username, password} | {type: bearer, token} | null', 'HTTP: password and token as ${ENV_VAR}'),
      f('clientCert', '${ENV_VAR} | null', 'HTTP: PEM client certificate for mTLS, with clientKey (CERT="$(cat c.pem)")'),
      f('clientKey', '${ENV_VAR} | null', 'HTTP: its PEM private key'),
      f('followRedirects', 'boolean', 'HTTP: follow up to 10 redirects (default true)'),
      f('expectStatus', 'list of codes and ranges | null', 'HTTP: the statuses that are up: [200, 301, 200-299] (default 200-299)'),
      f('periodSeconds', 'integer 10..31536000', 'PUSH: a ping is expected this often (default 86400; not with cron)'),
      f('cron', 'string', "PUSH: a ping is expected at each time of this cron expression: '0 3 * * *'"),
      f('timezone', 'IANA zone', 'PUSH: the time zone of cron (default UTC)'),
      f('graceSeconds', 'integer 0..31536000', 'PUSH: how late a ping may be before it is NOT_AVAILABLE (default 3600)'),
      f(
        'dns',
        '{recordType, resolver, transport}',
        'DNS: A | AAAA | CNAME | MX | TXT | NS | SOA | SRV | CAA | PTR; host:port | null; udp | tcp',
      ),
      f('ping', '{count, intervalMs, family}', 'PING: echoes 1..10; ms between them 20..1000; auto | ipv4 | ipv6'),
      f('tls', '{starttls, sni, minVersion}', 'TLS: smtp | imap | pop3 | ftp | postgres | ldap | null; a name | null; TLSv1..TLSv1.3'),
      f('udp', '{send, sendEncoding}', 'UDP: the datagram; text | hex'),
      f('tcp', '{send, sendEncoding, expect, expectKind}', 'TCP: bytes sent, text | hex; the first bytes received, text | hex | regex'),
      f('grpc', '{service, tls}', "GRPC: the health service asked ('' the server); TLS or plaintext"),
      f('websocket', '{headers, send}', 'WEBSOCKET: extra handshake headers (name: value); a text message sent'),
    ],
  },
  {
    key: 'announcements',
    help: 'HTML notices, by name',
    fields: [
      f('name', 'A-Z a-z 0-9 _ -', 'the announcement (it becomes an HTML class)', true),
      f('kind', 'INFORMATION | WARNING | PROBLEM', 'how it is shown', true),
      f('content', 'string', 'the notice (HTML, sanitised)', true),
      f('active', 'boolean', 'shown (default true)'),
      f('activeUntil', 'date-time | null', 'shown until then'),
    ],
  },
  {
    key: 'notifiers',
    help: `notification channels, by name; secrets as \${ENV_VAR} references`,
    fields: [
      f('name', 'A-Z a-z 0-9 . _ -', 'the notifier', true),
      f('type', NOTIFIER_TYPES.join(' | '), 'the channel; its fields follow', true),
      f('enabled', 'boolean', 'sends (default true)'),
      f('titleTemplate', 'string | null', 'a Liquid template of the title (docs/API.md#message-templates; null removes it)'),
      f('bodyTemplate', 'string | null', 'a Liquid template of the body (null removes it)'),
    ],
    perType: Object.fromEntries(
      NOTIFIER_TYPES.map((type) => [
        type,
        NOTIFIER_FIELDS[type].fields.map(
          (name) =>
            `${name}${NOTIFIER_FIELDS[type].required.includes(name) ? '*' : ''}${NOTIFIER_FIELDS[type].secrets.includes(name) ? ' (secret)' : ''}`,
        ),
      ]),
    ),
  },
  {
    key: 'alertRules',
    help: 'which notifiers get which alerts, by name',
    fields: [
      f('name', 'string', 'the rule', true),
      f('enabled', 'boolean', 'routes alerts (default true)'),
      f('events', `list of ${ALERT_EVENT_KINDS.join(', ')}`, 'the alert events it routes', true),
      f('notifiers', 'list of notifier names', 'where they go', true),
      f('resources', 'list of resource names', 'only these resources (none of resources/groups/agents: all)'),
      f('groups', 'list of group names', 'only the resources of these groups'),
      f('agents', 'list of agent names', 'only these agents'),
      f('groupWaitSeconds', 'integer ≥ 0', 'alerts within this wait leave as one message (default 30)'),
      f('repeatIntervalMinutes', 'integer ≥ 0', 'reminder while an incident stays open; 0 never (default 240)'),
      f(
        'severities',
        `list of ${SEVERITIES.join(', ')}`,
        'only resources of these severities (default all; agents and certificates are critical)',
      ),
      f('severityOverride', `${SEVERITIES.join(' | ')} | null`, "what PAGERDUTY and OPSGENIE receive instead of the resource's severity"),
    ],
  },
  {
    key: 'maintenance',
    help: 'maintenance windows, by name (kind inferred from the fields)',
    fields: [
      f('name', 'string', 'the window', true),
      f('kind', 'ONE_OFF | WEEKLY', 'inferred when left out'),
      f('startsAt', 'date-time', "ONE_OFF: start (no offset: the daemon's time zone)"),
      f('endsAt', 'date-time', 'ONE_OFF: end'),
      f('days', 'list of MON..SUN', 'WEEKLY: days it starts on'),
      f('startTime', 'HH:MM', 'WEEKLY: local start time'),
      f('durationMinutes', 'integer', 'WEEKLY: how long'),
      f('timeZone', 'IANA zone', 'WEEKLY: e.g. Europe/Paris'),
      f('resources', 'list of resource names', 'what it covers (one of resources/groups/agents at least)'),
      f('groups', 'list of group names', 'the resources of these groups'),
      f('agents', 'list of agent names', 'these tunnel agents'),
    ],
  },
  {
    key: 'statusPages',
    help: 'public status pages, by slug',
    fields: [
      f('slug', 'a-z 0-9 -', 'the page is /status/<slug>', true),
      f('title', 'string', 'the heading', true),
      f('description', 'string | null', 'text under the title'),
      f('groups', 'list of group names', 'the groups it shows'),
      f('showAnnouncements', 'boolean', 'show active announcements'),
      f('showIncidents', 'boolean', 'show recent incidents'),
      f('showErrorDetails', 'boolean', "anonymous visitors see the probes' own error messages, not a generic cause (default false)"),
      f('customHostname', 'host name | null', 'serve the page at / of this name on the edge'),
      f('httpsRedirect', 'boolean', 'redirect http:// to https:// on the custom host name'),
      f('footer', 'string | null', 'footer text'),
      f('subscriptions', 'boolean', 'readers may subscribe (the email form shows with emailNotifier too)'),
      f('emailNotifier', 'notifier name | null', 'the EMAIL notifier whose SMTP settings send subscriber mail'),
    ],
  },
  {
    key: 'agents',
    help: 'tunnel agents, by name (never their tokens: monctl agents token NAME); --prune deletes those not named only when the file has this section',
    fields: [f('name', 'A-Z a-z 0-9 . _ -', 'the agent; deleting one deletes the routes it served alone', true)],
  },
  {
    key: 'routes',
    help: 'tunnel routes, by name; --prune deletes those not named only when the file has this section',
    fields: [
      f('name', 'A-Z a-z 0-9 . _ -', 'the route', true),
      f('type', 'HTTP | TCP', 'inferred: TCP when listenPort is given, else HTTP'),
      f('agents', 'list of names or {name, target}', "the pool in order; an agent's target replaces the route's for it", true),
      f('target', 'string', 'HTTP: an http(s) URL seen from the agents; TCP: host:port', true),
      f('policy', POOL_POLICIES.join(' | '), 'how requests spread over the pool (default round-robin)'),
      f('affinity', AFFINITIES.join(' | '), 'HTTP: client-ip keeps a client IP on its agent (default none)'),
      f('hostname', 'host name | *.name', 'HTTP: the Host matched, or a wildcard', false),
      f('pathPrefix', 'path', 'HTTP: the path prefix matched (default /)'),
      f('listenPort', 'integer 1..65535', 'TCP: the port the daemon listens on'),
      f('enabled', 'boolean', 'served (default true)'),
      f('auth', 'none | basic | apiKey | oidc', 'HTTP: who may use it (basicUsers makes it basic, sso makes it oidc)'),
      f('basicUsers', 'list of {username, password: ${ENV_VAR}}', 'HTTP: basic auth users; no password keeps the stored one'),
      f('ipAllow', 'list of addresses and CIDR blocks', 'only these clients ([] for all)'),
      f('ipDeny', 'list of addresses and CIDR blocks', 'refuse these clients'),
      f('rateLimit', '{perSecond, burst} | number | null', 'requests (TCP: connections) per second per client IP'),
      f('httpsRedirect', 'boolean', 'HTTP: send plain-HTTP clients to HTTPS'),
      f(
        'sso',
        '{emails, domains, groups, sessionTtl} | null',
        'HTTP, auth oidc: who may sign in (verified emails, their domains or "*", groups); sessionTtl: seconds or 12h, null: --route-session',
      ),
      f('allowEncodedSlashes', 'boolean', 'HTTP: forward paths holding %2F or %5C'),
      f('requestHeaders', '{set: {name: value}, remove: [names]}', 'HTTP: request header rules'),
      f('responseHeaders', '{set: {name: value}, remove: [names]}', 'HTTP: response header rules'),
      f('hostHeader', 'host name | null', "HTTP: the Host the target gets (null: the target URL's)"),
      f('preserveHost', 'boolean', "HTTP: pass the client's Host instead"),
      f('stripPrefix', 'boolean', 'HTTP: remove pathPrefix before forwarding'),
      f(
        'healthCheck',
        '{path, method, headers, expectStatus, conditions, intervalSeconds, timeoutSeconds, unhealthyAfter, healthyAfter} | null',
        'each agent checks its own target; failing agents leave the rotation (TCP: a connect, timings only)',
      ),
    ],
  },
];

/** The field names a section takes (notifiers: name, type, enabled; notifiers-spec.ts adds the type's own). */
export function fieldNames(key: Section['key']): string[] {
  return APPLY_SECTIONS.find((s) => s.key === key)!.fields.map((x) => x.name);
}

export const SECTION_NAMES = APPLY_SECTIONS.map((s) => s.key);

/** The reference as `monctl apply --help-fields` prints it, and the README shows it. */
export function fieldReference(): string {
  const lines = ['Fields of a monctl apply -f file (YAML or JSON); * marks a required field. Fields left out are not managed.'];
  for (const s of APPLY_SECTIONS) {
    lines.push('', `${s.key}:  ${s.help}`);
    const width = Math.max(...s.fields.map((x) => x.name.length)) + 2;
    for (const x of s.fields) lines.push(`  ${`${x.name}${x.required ? '*' : ''}`.padEnd(width)}${x.value} — ${x.help}`);
    for (const [type, names] of Object.entries(s.perType ?? {})) lines.push(`  ${type}: ${names.join(', ')}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Edit distance (insert, delete, substitute: 1 each), case-insensitive. Ten lines: not worth a dependency. */
function distance(a: string, b: string): number {
  const [x, y] = [a.toLowerCase(), b.toLowerCase()];
  let row = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const next = [i];
    for (let j = 1; j <= y.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
    row = next;
  }
  return row[y.length];
}

/** ` (did you mean intervalSeconds?)` for the nearest name within a third of the word's length (at least 2 edits), else the names. */
export function didYouMean(word: string, names: readonly string[]): string {
  const scored = names.map((n) => ({ n, d: distance(word, n) })).sort((a, b) => a.d - b.d);
  const best = scored[0];
  if (best && best.d <= Math.max(2, Math.floor(word.length / 3))) return ` (did you mean ${best.n}?)`;
  return ` (one of ${names.join(', ')}; see monctl apply --help-fields)`;
}
