import { readFileSync } from 'node:fs';
import type { Static } from '@sinclair/typebox';
import type { Command } from 'commander';
import { HTTP_METHODS, MAX_HEADERS, MAX_REQUEST_BODY_BYTES } from '../../src/api/schemas/http-check.ts';
import type { ResourcePatch } from '../../src/api/schemas/monitoring.ts';
import { usage } from '../../src/errors.ts';
import { parseGoDuration } from '../../src/probes/conditions/go-values.ts';
import { readSecrets } from '../io/prompt.ts';

/**
 * The flags of an HTTP check's request and expected answer (docs/API.md#request-fields), and the
 * API fields they make. Secrets are never flag values (they would sit in shell history and `ps`):
 * `--secret-header NAME` and `--basic-auth USER` read the values from a hidden prompt on a
 * terminal, else from stdin, one line each: the secret headers in the order given, then the basic
 * password. The bearer token and the client certificate and key come from files.
 */
export interface HttpCheckFlags {
  method?: string;
  header?: string[];
  secretHeader?: string[];
  body?: string | false;
  contentType?: string;
  basicAuth?: string;
  bearerTokenFile?: string;
  clientCert?: string | false;
  clientKey?: string;
  timeout?: string | false;
  expectStatus?: string[] | false;
  upsideDown?: boolean;
  followRedirects?: boolean;
  /** update: */
  removeHeader?: string[];
  /** update's `--no-auth`: false when given. */
  auth?: boolean;
}

type Fields = Partial<Static<typeof ResourcePatch>>;

/** The API fields as these flags name them, for the daemon's 400s (cli/api/flag-errors.ts). */
export const HTTP_CHECK_FLAG_NAMES = {
  method: '--method',
  secretHeaders: '--secret-header',
  headers: '--header',
  contentType: '--content-type',
  body: '--body',
  'auth.username': '--basic-auth',
  'auth.password': 'the --basic-auth password',
  'auth.token': '--bearer-token-file',
  auth: '--basic-auth/--bearer-token-file',
  clientCert: '--client-cert',
  clientKey: '--client-key',
  followRedirects: '--no-follow-redirects',
  expectStatus: '--expect-status',
  timeoutSeconds: '--timeout',
  upsideDown: '--upside-down',
};

/** Commander's collector of a repeatable flag. */
export const collect = (value: string, previous: unknown) => [...(Array.isArray(previous) ? previous : []), value];
/** The same for a flag of comma-separated items (`--expect-status 200,301`). */
export const collectList = (value: string, previous: unknown) => [
  ...(Array.isArray(previous) ? previous : []),
  ...value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];

export function httpCheckFlags(cmd: Command, update: boolean): Command {
  cmd
    .option('--method <method>', `HTTP: ${HTTP_METHODS.join(', ')} (default GET)`)
    .option('--header <name=value>', 'HTTP: a request header, shown in reads (repeatable)', collect)
    .option(
      '--secret-header <name>',
      'HTTP: a header whose value is a secret, read from a prompt or stdin, one line each in flag order (repeatable)',
      collect,
    )
    .option('--body <text|@file>', 'HTTP: the request body, at most 64 KiB: the text itself, or @path to read a file')
    .option('--content-type <type>', "HTTP: the body's content type (default text/plain)")
    .option(
      '--basic-auth <user>',
      'HTTP: basic auth as this user; the password is read from a prompt or stdin (the line after the secret headers)',
    )
    .option('--bearer-token-file <path>', 'HTTP: send Authorization: Bearer with the token in this file')
    .option('--client-cert <path>', 'HTTP: a PEM client certificate (chain) for mTLS; needs --client-key')
    .option('--client-key <path>', 'HTTP: its PEM private key')
    .option('--timeout <duration>', "how long a check may take: 5s, 1m, or seconds, 1 to 120 (default the daemon's --http-timeout)")
    .option('--expect-status <codes>', 'HTTP: the statuses that are up: 200,301,200-299 (repeatable; default 200-299)', collectList)
    .option('--upside-down', 'AVAILABLE exactly when the check would otherwise fail')
    .option('--follow-redirects', 'HTTP: follow up to 10 redirects (the default)')
    .option('--no-follow-redirects', 'HTTP: a redirect is the answer');
  if (update) {
    cmd
      .option('--remove-header <name>', 'HTTP: stop sending this header, plain or secret (repeatable)', collect)
      .option('--no-body', 'HTTP: send no body (and no content type)')
      .option('--no-auth', 'HTTP: no basic or bearer auth')
      .option('--no-client-cert', 'HTTP: no client certificate')
      .option('--no-timeout', "the daemon's --http-timeout again")
      .option('--no-expect-status', 'HTTP: 2xx is up again')
      .option('--no-upside-down', 'AVAILABLE when the check succeeds again');
  }
  return cmd;
}

function readText(flag: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    usage(`${flag}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** An HTTP field name (an RFC 9110 token). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
function headerName(flag: string, name: string): string {
  if (!HEADER_NAME.test(name)) usage(`${flag} needs a header name (letters, digits and !#$%&'*+.^_\`|~-), not "${name}"`);
  return name;
}

/** `5s`, `1m`, or a number of seconds: whole seconds from 1 to 120. */
export function timeoutSeconds(text: string): number {
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : parseGoDuration(text);
  if (ms === null || ms % 1000 !== 0 || ms < 1000 || ms > 120_000)
    usage(`--timeout must be a duration of whole seconds from 1s to 120s (5s, 1m, 90), not "${text}"`);
  return ms / 1000;
}

/** `301`, or a range `200-299` with its ends in order. */
export function isStatusRange(text: string): boolean {
  const m = /^([1-5]\d\d)(?:-([1-5]\d\d))?$/.exec(text);
  return m !== null && (m[2] === undefined || Number(m[2]) >= Number(m[1]));
}

/** `200,301,200-299` as the API takes them (strings); a bad one is a usage error naming the flag. */
export function expectStatus(items: string[]): string[] {
  for (const item of items) {
    if (!isStatusRange(item)) usage(`--expect-status takes status codes (100 to 599) and ranges like 200-299, not "${item}"`);
  }
  if (items.length === 0 || items.length > 32) usage('--expect-status takes 1 to 32 codes and ranges');
  return items;
}

/** The API fields the flags set; secrets read in (prompt or stdin) last, once every other flag is known to be good. */
export async function httpCheckBody(f: HttpCheckFlags): Promise<Fields> {
  const b: Fields = {};
  if (f.method !== undefined) {
    const m = f.method.toUpperCase();
    if (!(HTTP_METHODS as readonly string[]).includes(m)) usage(`--method must be one of ${HTTP_METHODS.join(', ')}, not "${f.method}"`);
    b.method = m as (typeof HTTP_METHODS)[number];
  }
  const removed = (f.removeHeader ?? []).map((n) => headerName('--remove-header', n));
  const headers: Record<string, string | null> = {};
  for (const pair of f.header ?? []) {
    const eq = pair.indexOf('=');
    if (eq < 1) usage(`--header takes name=value, not "${pair}"`);
    const value = pair.slice(eq + 1);
    if (/[\r\n\0]/.test(value)) usage(`--header ${pair.slice(0, eq)}: the value must not hold CR, LF or NUL`);
    headers[headerName('--header', pair.slice(0, eq))] = value;
  }
  const secretNames = (f.secretHeader ?? []).map((n) => {
    // `--secret-header Name=value` would put the secret in argv: refused without repeating it.
    if (n.includes('=')) usage('--secret-header takes the header name only: its value is read from a prompt or stdin, never from a flag');
    return headerName('--secret-header', n);
  });
  const lower = (names: string[]) => names.map((n) => n.toLowerCase());
  const set = lower([...Object.keys(headers), ...secretNames]);
  const twice = set.find((n, i) => set.indexOf(n) !== i) ?? lower(removed).find((n, i, all) => all.indexOf(n) !== i);
  if (twice) usage(`header ${twice} is named twice (a header is plain, --header, or secret, --secret-header)`);
  if (set.length > MAX_HEADERS) usage(`at most ${MAX_HEADERS} headers`);
  // Removing sends null to both maps (null for an absent name changes nothing), but not to the map that sets
  // the name anew: `--remove-header X --secret-header X` makes a plain header secret in one update.
  const nulls = (kept: string[]) => Object.fromEntries(removed.filter((n) => !lower(kept).includes(n.toLowerCase())).map((n) => [n, null]));
  const plain = { ...nulls(Object.keys(headers)), ...headers };
  if (Object.keys(plain).length) b.headers = plain;

  if (f.body === false) Object.assign(b, { body: null, contentType: null });
  else if (f.body !== undefined) {
    b.body = f.body.startsWith('@') ? readText('--body', f.body.slice(1)) : f.body;
    if (Buffer.byteLength(b.body) > MAX_REQUEST_BODY_BYTES) usage(`--body is ${Buffer.byteLength(b.body)} bytes; at most 64 KiB`);
  }
  if (f.contentType !== undefined) b.contentType = f.contentType;

  const auths = [f.basicAuth !== undefined, f.bearerTokenFile !== undefined, f.auth === false].filter(Boolean).length;
  if (auths > 1) usage('give one of --basic-auth, --bearer-token-file and --no-auth');
  if (f.auth === false) b.auth = null;
  if (f.basicAuth !== undefined && /[:\r\n\0]/.test(f.basicAuth)) usage('--basic-auth: the user name must not hold a colon');
  if (f.bearerTokenFile !== undefined) {
    const token = readText('--bearer-token-file', f.bearerTokenFile).replace(/\r?\n$/, '');
    if (!token || /[\r\n\0]/.test(token)) usage(`--bearer-token-file: ${f.bearerTokenFile} must hold the token on one line`);
    b.auth = { type: 'bearer', token };
  }

  if (f.clientCert === false) {
    if (f.clientKey !== undefined) usage('give --client-key with --client-cert, not with --no-client-cert');
    Object.assign(b, { clientCert: null, clientKey: null });
  } else if (f.clientCert !== undefined || f.clientKey !== undefined) {
    if (f.clientCert === undefined || f.clientKey === undefined) usage('--client-cert and --client-key go together');
    b.clientCert = pem('--client-cert', f.clientCert);
    b.clientKey = pem('--client-key', f.clientKey);
  }

  if (f.timeout === false) b.timeoutSeconds = null;
  else if (f.timeout !== undefined) b.timeoutSeconds = timeoutSeconds(f.timeout);
  if (f.expectStatus === false) b.expectStatus = null;
  else if (f.expectStatus !== undefined) b.expectStatus = expectStatus(f.expectStatus);
  if (f.upsideDown !== undefined) b.upsideDown = f.upsideDown;
  if (f.followRedirects !== undefined) b.followRedirects = f.followRedirects;

  // The secrets, in the documented order: secret headers as given, then the basic password.
  const labels = [...secretNames.map((n) => `Value of header ${n}`), ...(f.basicAuth !== undefined ? [`Password of ${f.basicAuth}`] : [])];
  const values = await readSecrets(labels);
  const secret = { ...nulls(secretNames), ...Object.fromEntries(secretNames.map((n, i) => [n, values[i]])) };
  if (Object.keys(secret).length) b.secretHeaders = secret;
  if (f.basicAuth !== undefined) b.auth = { type: 'basic', username: f.basicAuth, password: values[secretNames.length] };
  return b;
}

function pem(flag: string, path: string): string {
  const text = readText(flag, path);
  if (!text.includes('-----BEGIN ')) usage(`${flag}: ${path} is not PEM (no -----BEGIN line)`);
  return text;
}
