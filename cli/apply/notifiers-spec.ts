import {
  EMAIL_SECURITIES,
  NOTIFIER_FIELDS,
  NOTIFIER_TYPES,
  type NotifierType,
  OPSGENIE_REGIONS,
  priorityOf,
} from '../../src/notifier-fields.ts';
import { didYouMean, fieldNames } from './fields.ts';

/**
 * The `notifiers:` section of an apply file. Fields are flat, as the API's
 * `config` takes them. Secret fields (headers' values, signingSecret, a
 * Slack url, token, password) must be `${ENV_VAR}` references, expanded from
 * the environment now: a file is meant to be committed, so a literal secret
 * in it is refused, and so is a reference to a variable that is not set.
 */
export interface NotifierSpec {
  name: string;
  type: NotifierType;
  enabled?: boolean;
  /** Non-secret config fields as written (compared with the daemon's). */
  config: Record<string, unknown>;
  /** Secret fields, expanded (sent on every apply: the daemon never shows them, so they cannot be compared). */
  secrets: Record<string, unknown>;
  /** Left out: not managed; null: removed. */
  titleTemplate?: string | null;
  bodyTemplate?: string | null;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** `Bearer ${TOKEN}` with TOKEN from `env`; an error message when it is literal or names an unset variable. */
export function expandSecret(value: unknown, env: NodeJS.ProcessEnv): { value: string } | { error: string } {
  if (typeof value !== 'string' || value === '') return { error: 'must be a non-empty string' };
  const names = [...value.matchAll(REF)].map((m) => m[1]);
  if (names.length === 0) return { error: 'is a secret: write it as a ${ENV_VAR} reference, not in the file' };
  const unset = names.filter((n) => env[n] === undefined || env[n] === '');
  if (unset.length) return { error: `environment variable ${unset.join(', ')} is not set` };
  return { value: value.replace(REF, (_, n: string) => env[n]!) };
}

export function validateNotifiers(
  list: Obj[],
  err: (path: string, msg: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): NotifierSpec[] {
  return list.map((n, i) => {
    const p = `notifiers[${i}]`;
    const typeText = typeof n.type === 'string' ? n.type.toUpperCase() : undefined;
    const type = NOTIFIER_TYPES.find((t) => t === typeText);
    if (typeof n.name !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(n.name)) err(`${p}.name`, 'must be 1 to 64 of A-Z a-z 0-9 . _ -');
    if (!type) err(`${p}.type`, `must be one of ${NOTIFIER_TYPES.join(', ')}`);
    if (n.enabled !== undefined && typeof n.enabled !== 'boolean') err(`${p}.enabled`, 'must be true or false');
    const spec: NotifierSpec = { name: n.name as string, type: type!, enabled: n.enabled as boolean | undefined, config: {}, secrets: {} };
    for (const key of ['titleTemplate', 'bodyTemplate'] as const) {
      const t = n[key];
      if (t !== undefined && t !== null && (typeof t !== 'string' || t.length > 8192))
        err(`${p}.${key}`, 'must be a string of at most 8192 characters, or null');
      else spec[key] = t as string | null | undefined;
    }
    if (!type) return spec;
    const fields = NOTIFIER_FIELDS[type];
    for (const key of Object.keys(n)) {
      const allowed = [...fieldNames('notifiers'), ...fields.fields];
      if (!allowed.includes(key))
        err(`${p}.${key}`, `unknown field${didYouMean(key, allowed)} (${type} takes ${fields.fields.join(', ')})`);
    }
    for (const key of fields.required) if (n[key] === undefined || n[key] === null) err(`${p}.${key}`, `is required for ${type}`);
    for (const key of fields.fields) {
      const value = n[key];
      if (value === undefined || value === null) continue;
      if (key === 'headers') {
        if (!isObj(value)) {
          err(`${p}.headers`, 'must be a mapping of header names to values');
          continue;
        }
        const headers: Record<string, string> = {};
        for (const [name, v] of Object.entries(value)) {
          const r = expandSecret(v, env);
          if ('error' in r) err(`${p}.headers.${name}`, r.error);
          else headers[name] = r.value;
        }
        spec.secrets.headers = headers;
      } else if (fields.secrets.includes(key)) {
        const r = expandSecret(value, env);
        if ('error' in r) err(`${p}.${key}`, r.error);
        else spec.secrets[key] = r.value;
      } else {
        spec.config[key] = checkField(`${p}.${key}`, type, key, value, err);
      }
    }
    return spec;
  });
}

/** Types only: the daemon checks the rest (and names the field) when the plan runs. */
function checkField(path: string, type: NotifierType, key: string, value: unknown, err: (path: string, msg: string) => void): unknown {
  const numeric = type === 'PUSHOVER' || type === 'GOTIFY';
  if (key === 'priority' && numeric) {
    const [min, max] = type === 'PUSHOVER' ? [-2, 2] : [0, 10];
    if (!Number.isInteger(value) || (value as number) < min || (value as number) > max)
      err(path, `must be an integer from ${min} to ${max}`);
    return value;
  }
  if (key === 'retrySeconds' || key === 'expireSeconds') {
    if (!Number.isInteger(value) || (value as number) < 30 || (value as number) > 10800) err(path, 'must be an integer from 30 to 10800');
    return value;
  }
  if (key === 'region') {
    if (typeof value !== 'string' || !OPSGENIE_REGIONS.includes(value.toUpperCase() as 'US'))
      err(path, `must be one of ${OPSGENIE_REGIONS.join(', ')}`);
    return typeof value === 'string' ? value.toUpperCase() : value;
  }
  if (key === 'port' && (!Number.isInteger(value) || (value as number) < 1 || (value as number) > 65535))
    err(path, 'must be a port number');
  else if (key === 'skipTlsVerify' && typeof value !== 'boolean') err(path, 'must be true or false');
  else if (key === 'to' && (!Array.isArray(value) || value.length === 0 || value.some((v) => typeof v !== 'string')))
    err(path, 'must be a list of addresses');
  else if (key === 'priority' && ((typeof value !== 'number' && typeof value !== 'string') || priorityOf(value) === undefined))
    err(path, 'must be 1 to 5, or min, low, default, high, max');
  else if (key === 'security' && !EMAIL_SECURITIES.includes(String(value).toUpperCase() as 'TLS'))
    err(path, `must be one of ${EMAIL_SECURITIES.join(', ')}`);
  else if (!['port', 'skipTlsVerify', 'to', 'priority'].includes(key) && typeof value !== 'string') err(path, 'must be a string');
  return key === 'security' && typeof value === 'string' ? value.toUpperCase() : value;
}
