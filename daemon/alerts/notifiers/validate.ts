import { X509Certificate } from 'node:crypto';
import { DEFAULT_PORTS, NOTIFIER_FIELDS, NTFY_PRIORITIES, type NotifierType, priorityOf } from '../../../src/notifier-fields.ts';
import { badRequest, type FieldError } from '../../../src/errors.ts';
import type { FlatConfig, StoredConfig, StoredSecrets } from './config-types.ts';
import { CHANNELS } from './channels/index.ts';
import { validSigningSecret } from './signing.ts';

/**
 * Checks a notifier's fields for its type and splits them into the config
 * (stored as JSON) and the secrets (sealed). Every problem is reported at once,
 * as a 400 naming `config.<field>`.
 */
export type { FlatConfig } from './config-types.ts';

const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\d{1,3}(?:\.\d{1,3}){3}|\[?[0-9A-Fa-f:.]+\]?)$/;
const TOKEN_CHARS = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]{0,4096}$/;
/** Headers the sender sets itself, or that would break the request framing. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-type',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);

/** An http(s) URL, or why not. Credentials in a non-secret URL would be shown to every reader: refused. */
export function urlProblem(value: string, secret: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute http:// or https:// URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must be an http:// or https:// URL, not ${url.protocol}`;
  if (!secret && (url.username || url.password)) return 'must not carry credentials (use a header or the token field)';
  return undefined;
}

export function normalise(type: NotifierType, flat: FlatConfig): { config: StoredConfig; secrets: StoredSecrets } {
  const errors: FieldError[] = [];
  const err = (field: string, message: string) => errors.push({ field: `config.${field}`, message });
  const spec = NOTIFIER_FIELDS[type];
  for (const [key, value] of Object.entries(flat)) {
    if (value !== undefined && !spec.fields.includes(key))
      err(key, `is not a field of ${type} notifiers (they take ${spec.fields.join(', ')})`);
  }
  const missing = spec.required.filter((key) => (flat as Record<string, unknown>)[key] === undefined);
  for (const key of missing) err(key, `is required for ${type}`);
  // The checks below read the required fields.
  if (missing.length) throw invalid(errors);

  const config: StoredConfig = {};
  const secrets: StoredSecrets = {};
  const channel = CHANNELS[type];
  if (channel) {
    const out = { config: config as Record<string, unknown>, secrets: secrets as Record<string, unknown> };
    for (const key of spec.fields) {
      const value = (flat as Record<string, unknown>)[key];
      if (value !== undefined) (spec.secrets.includes(key) ? out.secrets : out.config)[key] = value;
    }
    // A secret webhook URL is shown by its origin.
    if (spec.secrets.includes('url') && typeof flat.url === 'string') {
      const problem = urlProblem(flat.url, true);
      if (problem) err('url', problem);
      else config.origin = new URL(flat.url).origin;
    }
    // The type's checks read the fields these found well formed (a URL that parses): only then.
    if (errors.length === 0) channel.check(flat, { config, secrets }, err);
  } else if (type === 'WEBHOOK') {
    const problem = urlProblem(flat.url!, false);
    if (problem) err('url', problem);
    config.url = flat.url;
    if (flat.headers && Object.keys(flat.headers).length) {
      if (Object.keys(flat.headers).length > 20) err('headers', 'at most 20 headers');
      const seen = new Set<string>();
      for (const [name, value] of Object.entries(flat.headers)) {
        const lower = name.toLowerCase();
        if (!TOKEN_CHARS.test(name)) err(`headers.${name}`, 'is not a valid header name');
        else if (RESERVED_HEADERS.has(lower)) err(`headers.${name}`, 'is set by monctl itself');
        else if (seen.has(lower)) err(`headers.${name}`, 'is given twice (header names are case-insensitive)');
        else if (!HEADER_VALUE.test(value)) err(`headers.${name}`, 'value must be at most 4096 characters, without line breaks');
        seen.add(lower);
      }
      secrets.headers = { ...flat.headers };
    }
    if (flat.signingSecret !== undefined) {
      if (!validSigningSecret(flat.signingSecret)) err('signingSecret', 'must be whsec_ followed by the base64 of 24 to 64 bytes');
      secrets.signingSecret = flat.signingSecret;
    }
  } else if (type === 'SLACK') {
    const problem = urlProblem(flat.url!, true);
    if (problem) err('url', problem);
    else config.origin = new URL(flat.url!).origin;
    secrets.url = flat.url;
  } else if (type === 'NTFY') {
    const problem = urlProblem(flat.url!, false);
    if (problem) err('url', problem);
    config.url = flat.url!.replace(/\/+$/, '');
    if (!/^[-_A-Za-z0-9]{1,64}$/.test(flat.topic!)) err('topic', 'must be 1 to 64 of A-Z a-z 0-9 _ -');
    config.topic = flat.topic;
    config.priority = priorityOf(flat.priority ?? 3);
    if (config.priority === undefined) err('priority', `must be 1 to 5, or one of ${NTFY_PRIORITIES.join(', ')}`);
    if (flat.token !== undefined) {
      if (!/^[\x21-\x7e]{1,512}$/.test(flat.token)) err('token', 'must be 1 to 512 printable characters without spaces');
      secrets.token = flat.token;
    }
  } else {
    email(flat, config, secrets, err);
  }
  if (errors.length) throw invalid(errors);
  return { config, secrets };
}

function email(flat: FlatConfig, config: StoredConfig, secrets: StoredSecrets, err: (field: string, message: string) => void): void {
  if (!HOST.test(flat.host!) || flat.host!.length > 253) err('host', 'must be a host name or an IP address');
  config.host = flat.host!.replace(/^\[(.*)\]$/, '$1');
  config.security = flat.security ?? 'STARTTLS';
  config.port = flat.port ?? DEFAULT_PORTS[config.security];
  if (flat.username !== undefined) {
    if (flat.username.length < 1 || flat.username.length > 256 || /[\r\n]/.test(flat.username))
      err('username', 'must be 1 to 256 characters on one line');
    config.username = flat.username;
    if (flat.password === undefined) err('password', 'is required with username');
  }
  if (flat.password !== undefined) {
    if (flat.username === undefined) err('password', 'goes with username');
    if (flat.password.length < 1 || flat.password.length > 1024) err('password', 'must be 1 to 1024 characters');
    secrets.password = flat.password;
  }
  if (!EMAIL.test(flat.from!)) err('from', 'must be an email address (name@example.com)');
  config.from = flat.from;
  (flat.to ?? []).forEach((to, i) => {
    if (!EMAIL.test(to)) err(`to[${i}]`, 'must be an email address (name@example.com)');
  });
  config.to = [...(flat.to ?? [])];
  if (flat.skipTlsVerify) config.skipTlsVerify = true;
  if (flat.tlsCa !== undefined) {
    try {
      new X509Certificate(flat.tlsCa);
      config.tlsCa = flat.tlsCa;
    } catch {
      err('tlsCa', 'must be one or more PEM certificates (-----BEGIN CERTIFICATE-----)');
    }
  }
}

function invalid(errors: FieldError[]) {
  return badRequest(`Invalid notifier: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`, errors);
}
