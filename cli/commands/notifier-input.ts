import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Static } from '@sinclair/typebox';
import type { NotifierConfigPatch, NotifierType } from '../../src/api/schemas/notifiers.ts';
import { usage } from '../../src/errors.ts';
import { NOTIFIER_FIELDS } from '../../src/notifier-fields.ts';
import { readSecrets } from '../io/prompt.ts';
import { FIELD_FLAGS, SECRET_LABELS, typesTaking, WITH_SECRETS, withFlag, withKey } from './notifier-flag-table.ts';

/**
 * The flags of `notifiers add|update` and the config they make. Secrets are
 * never flag values: a hidden prompt on a terminal, else stdin, one line per
 * secret in the order the flags name them (`--header A --header B` reads two
 * lines; a Slack URL or a token is the first line; PUSHOVER reads the user key,
 * then the application token).
 */
export type ConfigPatch = Static<typeof NotifierConfigPatch>;

export interface NotifierFlags {
  url?: string;
  header?: string[];
  removeHeader?: string[];
  topic?: string;
  priority?: string;
  removeToken?: boolean;
  host?: string;
  port?: string;
  security?: string;
  username?: string;
  withPassword?: boolean;
  removeAuth?: boolean;
  from?: string;
  to?: string[];
  skipTlsVerify?: boolean;
  smtpCaFile?: string;
  removeApiUrl?: boolean;
  /** `--title-template TEXT|@FILE`; update's `--no-title-template` makes it false. */
  titleTemplate?: string | false;
  bodyTemplate?: string | false;
  /** The channel types' fields (FIELD_FLAGS) and `--with-…` secrets, by commander key. */
  [key: string]: unknown;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];
const collectList = (value: string, previous: string[] = []) => [
  ...previous,
  ...value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];
/** `TELEGRAM, PAGERDUTY: ` before a flag's help. */
const forTypes = (field: string) => `${typesTaking(field).join(', ')}: `;
const secretUrlTypes = Object.keys(SECRET_LABELS.url).join(', ');

export function notifierFlags(cmd: Command, update: boolean): Command {
  cmd
    .option(
      '--url <url>',
      `WEBHOOK: where to POST; NTFY, GOTIFY: the server (e.g. https://ntfy.sh). A ${secretUrlTypes} URL is a secret: it is read from stdin or a prompt`,
    )
    .option('--header <name>', 'WEBHOOK: a header to send, its value read from stdin or a prompt (repeatable)', collect)
    .option('--topic <topic>', 'NTFY: the topic')
    .option('--priority <priority>', 'NTFY: 1 to 5, or min, low, default, high, max; PUSHOVER: -2 to 2 (2: emergency); GOTIFY: 0 to 10')
    .option('--with-token', 'NTFY: read an access token from stdin or a prompt (the other types that take a token always read it)')
    .option('--host <host>', 'EMAIL: the SMTP server')
    .option('--port <port>', 'EMAIL: its port (587 STARTTLS, 465 TLS, 25 NONE by default)')
    .option('--security <mode>', 'EMAIL: STARTTLS (default), TLS or NONE')
    .option(
      '--username <user>',
      update ? 'EMAIL: SMTP AUTH user (give --with-password too)' : 'EMAIL: SMTP AUTH user; the password is read from stdin or a prompt',
    )
    .option('--from <address>', 'EMAIL: sender address')
    .option('--to <address>', 'EMAIL: recipient (repeatable, or comma-separated)', collectList)
    .option('--skip-tls-verify', 'EMAIL: accept any certificate of the SMTP server (prefer --smtp-ca-file)')
    .option('--smtp-ca-file <file>', 'EMAIL: PEM CA certificate(s) to trust for the SMTP server');
  for (const x of FIELD_FLAGS) cmd.option(x.flag, `${forTypes(x.field)}${x.help}`);
  cmd
    .option('--title-template <text>', 'a Liquid template of the title, or @FILE to read it (docs/API.md#message-templates)')
    .option('--body-template <text>', 'a Liquid template of the body, or @FILE');
  if (update) {
    cmd
      .option('--no-skip-tls-verify', "EMAIL: verify the SMTP server's certificate again")
      .option('--remove-header <name>', 'WEBHOOK: stop sending this header (repeatable)', collect)
      .option('--remove-token', 'NTFY: send no token')
      .option('--remove-api-url', `${forTypes('apiUrl')}send to the provider's own API host again`)
      .option('--with-password', 'EMAIL: read a new SMTP password from stdin or a prompt')
      .option('--remove-auth', 'EMAIL: no SMTP AUTH (drops username and password)')
      .option('--no-title-template', 'remove the title template (the default title again)')
      .option('--no-body-template', 'remove the body template (the default text again)');
    for (const field of WITH_SECRETS.filter((s) => s !== 'token'))
      cmd.option(withFlag(field), `${Object.keys(SECRET_LABELS[field]).join(', ')}: read a new ${what(field)} from stdin or a prompt`);
  }
  return cmd;
}

const what = (field: string) => ({ url: 'webhook URL', routingKey: 'routing key', apiKey: 'API key', userKey: 'user key' })[field] ?? field;

/** The older types' flags, by commander key, and the config field each sets (to refuse one its type does not take). */
const OLD_FLAG_FIELDS: Record<string, string> = {
  url: 'url',
  header: 'headers',
  removeHeader: 'headers',
  topic: 'topic',
  priority: 'priority',
  withToken: 'token',
  removeToken: 'token',
  host: 'host',
  port: 'port',
  security: 'security',
  username: 'username',
  withPassword: 'password',
  removeAuth: 'username',
  from: 'from',
  to: 'to',
  skipTlsVerify: 'skipTlsVerify',
  smtpCaFile: 'tlsCa',
  removeApiUrl: 'apiUrl',
};
const flagOf = (key: string) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** A flag whose field the type does not take: a usage error naming the types that do. */
function refuseForeign(type: NotifierType, f: NotifierFlags): void {
  const keys: Record<string, string> = {
    ...OLD_FLAG_FIELDS,
    ...Object.fromEntries(FIELD_FLAGS.map((x) => [x.key, x.field])),
    ...Object.fromEntries(WITH_SECRETS.map((s) => [withKey(s), s])),
  };
  for (const [key, field] of Object.entries(keys)) {
    if (f[key] === undefined || NOTIFIER_FIELDS[type].fields.includes(field)) continue;
    const flag = key === 'skipTlsVerify' && f[key] === false ? '--no-skip-tls-verify' : flagOf(key);
    usage(`${flag} is for ${typesTaking(field).join(', ')}, not ${type}`);
  }
}

/** `--title-template`'s value: the text, a file's text with @FILE; '' and --no-… remove it (update) or leave it out (add). */
export function templateOf(flag: string, value: string | false | undefined, update: boolean): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === false || value === '') return update ? null : undefined;
  if (!value.startsWith('@')) return value;
  try {
    return readFileSync(value.slice(1), 'utf8');
  } catch (err) {
    usage(`${flag}: cannot read ${value.slice(1)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** `titleTemplate`/`bodyTemplate` of a create or PATCH body, from the flags (only those given). */
export function templatesOf(f: NotifierFlags, update: boolean): { titleTemplate?: string | null; bodyTemplate?: string | null } {
  const title = templateOf('--title-template', f.titleTemplate, update);
  const body = templateOf('--body-template', f.bodyTemplate, update);
  return { ...(title !== undefined ? { titleTemplate: title } : {}), ...(body !== undefined ? { bodyTemplate: body } : {}) };
}

/** The config fields the flags set, secrets read in; for add (`type` known) or update (`type` of the notifier). */
export async function configOf(type: NotifierType, f: NotifierFlags, update: boolean): Promise<ConfigPatch> {
  refuseForeign(type, f);
  const c: Record<string, unknown> = {};
  const secrets = NOTIFIER_FIELDS[type].secrets;
  if (f.url !== undefined) {
    if (secrets.includes('url')) usage(`the ${type} webhook URL is a secret: pipe it in or type it at the prompt, not as --url`);
    c.url = f.url;
  }
  if (f.topic !== undefined) c.topic = f.topic;
  if (f.priority !== undefined) c.priority = /^-?\d+$/.test(f.priority) ? Number(f.priority) : f.priority;
  if (f.host !== undefined) c.host = f.host;
  if (f.port !== undefined) {
    if (!/^\d{1,5}$/.test(f.port)) usage(`--port must be a number, not "${f.port}"`);
    c.port = Number(f.port);
  }
  if (f.security !== undefined) c.security = f.security.toUpperCase();
  if (f.username !== undefined) c.username = f.username;
  if (f.from !== undefined) c.from = f.from;
  if (f.to !== undefined) c.to = f.to;
  if (f.skipTlsVerify !== undefined) c.skipTlsVerify = f.skipTlsVerify;
  if (f.smtpCaFile !== undefined) {
    try {
      c.tlsCa = readFileSync(f.smtpCaFile, 'utf8');
    } catch (err) {
      usage(`cannot read ${f.smtpCaFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  for (const x of FIELD_FLAGS) {
    const text = f[x.key];
    if (typeof text !== 'string') continue;
    const value = x.parse ? x.parse(text) : text;
    if (value === undefined) usage(`${x.flag.split(' ')[0]} must be ${x.expect}, not "${text}"`);
    c[x.field] = value;
  }
  if (f.removeToken) c.token = null;
  if (f.removeApiUrl) c.apiUrl = null;
  if (f.removeAuth) Object.assign(c, { username: null, password: null });
  if (f.removeHeader?.length) c.headers = Object.fromEntries(f.removeHeader.map((h) => [h, null]));

  // The secrets, in a fixed order: headers as given, then the type's own in NOTIFIER_FIELDS order.
  const wanted: Array<{ label: string; put: (v: string) => void }> = [];
  for (const name of f.header ?? [])
    wanted.push({ label: `Value of header ${name}`, put: (v) => (c.headers = { ...(c.headers as object), [name]: v }) });
  for (const field of secrets) {
    const label = SECRET_LABELS[field]?.[type];
    if (!label) continue;
    const asked =
      field === 'password'
        ? (f.username !== undefined && !update) || f.withPassword
        : f[withKey(field)] || (!update && NOTIFIER_FIELDS[type].required.includes(field));
    if (asked) wanted.push({ label, put: (v) => (c[field] = v) });
  }
  const values = await readSecrets(wanted.map((w) => w.label));
  wanted.forEach((w, i) => w.put(values[i].trim()));
  return c as ConfigPatch;
}
