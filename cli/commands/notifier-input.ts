import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Static } from '@sinclair/typebox';
import type { NotifierConfigPatch, NotifierType } from '../../src/api/schemas/notifiers.ts';
import { usage } from '../../src/errors.ts';
import { readSecrets } from '../io/prompt.ts';

/**
 * The flags of `notifiers add|update` and the config they make. Secrets are
 * never flag values: a hidden prompt on a terminal, else stdin, one line per
 * secret in the order the flags name them (`--header A --header B` reads two
 * lines; a Slack URL or a token is the first line).
 */
export type ConfigPatch = Static<typeof NotifierConfigPatch>;

export interface NotifierFlags {
  url?: string;
  header?: string[];
  removeHeader?: string[];
  topic?: string;
  priority?: string;
  withToken?: boolean;
  removeToken?: boolean;
  withUrl?: boolean;
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
}

const collect = (value: string, previous: string[] = []) => [...previous, value];
const collectList = (value: string, previous: string[] = []) => [
  ...previous,
  ...value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];

export function notifierFlags(cmd: Command, update: boolean): Command {
  cmd
    .option(
      '--url <url>',
      'WEBHOOK: where to POST; NTFY: the server (e.g. https://ntfy.sh). A SLACK URL is a secret: it is read from stdin or a prompt',
    )
    .option('--header <name>', 'WEBHOOK: a header to send, its value read from stdin or a prompt (repeatable)', collect)
    .option('--topic <topic>', 'NTFY: the topic')
    .option('--priority <priority>', 'NTFY: 1 to 5, or min, low, default, high, max')
    .option('--with-token', 'NTFY: read an access token from stdin or a prompt')
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
  if (update) {
    cmd
      .option('--no-skip-tls-verify', "EMAIL: verify the SMTP server's certificate again")
      .option('--remove-header <name>', 'WEBHOOK: stop sending this header (repeatable)', collect)
      .option('--remove-token', 'NTFY: send no token')
      .option('--with-url', 'SLACK: read a new webhook URL from stdin or a prompt')
      .option('--with-password', 'EMAIL: read a new SMTP password from stdin or a prompt')
      .option('--remove-auth', 'EMAIL: no SMTP AUTH (drops username and password)');
  }
  return cmd;
}

/** The config fields the flags set, secrets read in; for add (`type` known) or update (`type` of the notifier). */
export async function configOf(type: NotifierType, f: NotifierFlags, update: boolean): Promise<ConfigPatch> {
  const c: ConfigPatch = {};
  if (f.url !== undefined) {
    if (type === 'SLACK') usage('the SLACK webhook URL is a secret: pipe it in or type it at the prompt, not as --url');
    c.url = f.url;
  }
  if (f.topic !== undefined) c.topic = f.topic;
  if (f.priority !== undefined) c.priority = /^\d+$/.test(f.priority) ? Number(f.priority) : f.priority;
  if (f.host !== undefined) c.host = f.host;
  if (f.port !== undefined) {
    if (!/^\d{1,5}$/.test(f.port)) usage(`--port must be a number, not "${f.port}"`);
    c.port = Number(f.port);
  }
  if (f.security !== undefined) c.security = f.security.toUpperCase() as 'STARTTLS';
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
  if (f.removeToken) c.token = null;
  if (f.removeAuth) Object.assign(c, { username: null, password: null });
  if (f.removeHeader?.length) c.headers = Object.fromEntries(f.removeHeader.map((h) => [h, null]));

  // The secrets, in a fixed order: headers as given, then the type's own.
  const wanted: Array<{ label: string; put: (v: string) => void }> = [];
  for (const name of f.header ?? [])
    wanted.push({ label: `Value of header ${name}`, put: (v) => (c.headers = { ...c.headers, [name]: v }) });
  if (type === 'SLACK' && (!update || f.withUrl)) wanted.push({ label: 'Slack incoming-webhook URL', put: (v) => (c.url = v) });
  if (f.withToken) wanted.push({ label: 'ntfy access token', put: (v) => (c.token = v) });
  if ((f.username !== undefined && !update) || f.withPassword) wanted.push({ label: 'SMTP password', put: (v) => (c.password = v) });
  const values = await readSecrets(wanted.map((w) => w.label));
  wanted.forEach((w, i) => w.put(values[i].trim()));
  return c;
}
