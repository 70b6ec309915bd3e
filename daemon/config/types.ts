import { parseHostPort } from '../config.ts';
import { MASK, redactUrl } from './redact-url.ts';

export { MASK };

/**
 * The kinds of value a daemon setting can hold. One parser per kind reads a
 * flag, an env var and a config-file value alike, so that `15s` means the same
 * everywhere. Flags and env vars are always text; a config file has YAML
 * types, and there a value of the wrong YAML type is an error (`probeConcurrency: "8"`
 * is refused: write `8`), except that durations also take text (`15s`).
 */
export interface ValueType<T = unknown> {
  /** Shown in messages and in the settings table of the README. */
  name: string;
  /** Throws an Error whose message is the reason (`must be …, got …`). `text`: the raw came from a flag or env var. */
  parse(raw: unknown, text: boolean): T;
  /** The value as --print-config writes it (YAML scalar, in the syntax `parse` reads back). */
  format(value: T): string | number | boolean;
  /** `format` never shows a secret (a URL's password is masked): --print-config may show its output. */
  masks?: boolean;
}

/** `got "x"` / `got number 8080` / `got a mapping`, for messages. */
export function describe(raw: unknown): string {
  if (raw === null || raw === undefined) return 'no value';
  if (typeof raw === 'string') return `"${raw}"`;
  if (Array.isArray(raw)) return 'a list';
  if (typeof raw === 'object') return 'a mapping';
  return `${typeof raw} ${String(raw)}`;
}

function fail(expected: string, raw: unknown): never {
  throw new Error(`must be ${expected}, got ${describe(raw)}`);
}

export const string: ValueType<string> = {
  name: 'string',
  parse(raw) {
    if (typeof raw !== 'string' || raw.trim() === '') fail('a non-empty string', raw);
    return raw;
  },
  format: (v) => v,
};

/**
 * An http(s) base URL without credentials, query or fragment (`--public-url`),
 * kept without its trailing slash so that paths can be appended.
 */
export const httpUrl: ValueType<string> = {
  name: 'http(s) URL',
  parse(raw) {
    if (typeof raw !== 'string') fail('an http:// or https:// URL', raw);
    // A refused value is echoed without the credentials it may hold (a password, a ?token=).
    const shown = redactUrl(raw);
    let url: URL;
    try {
      url = new URL(raw.trim());
    } catch {
      return fail('an http:// or https:// URL', shown);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') fail('an http:// or https:// URL', shown);
    if (url.username || url.password || url.search || url.hash) fail('a URL without credentials, query or fragment', shown);
    return url.href.replace(/\/+$/, '');
  },
  format: (v) => v,
};

/** A file path; relative paths in a config file are made absolute against the file's folder (config/file.ts). */
export const path: ValueType<string> = { ...string, name: 'path' };

export const hostPort: ValueType<{ host: string; port: number }> = {
  name: 'HOST:PORT',
  parse(raw) {
    if (typeof raw !== 'string') fail('HOST:PORT (a string, e.g. "0.0.0.0:8080")', raw);
    try {
      return parseHostPort(raw, 'it');
    } catch {
      return fail('HOST:PORT, [IPv6]:PORT or :PORT with a port up to 65535', raw);
    }
  },
  format: ({ host, port }) => `${host.includes(':') ? `[${host}]` : host}:${port}`,
};

export const positiveInteger: ValueType<number> = {
  name: 'integer > 0',
  parse(raw, text) {
    const value = text && typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : raw;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) fail('an integer greater than 0', raw);
    return value;
  },
  format: (v) => v,
};

export const positiveNumber: ValueType<number> = {
  name: 'number > 0',
  parse(raw, text) {
    const value = text && typeof raw === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(raw) ? Number(raw) : raw;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) fail('a number greater than 0', raw);
    return value;
  },
  format: (v) => v,
};

/** Whole numbers > 0, as `14,7,1` (flag, env, or YAML text) or a YAML list; sorted largest first, duplicates dropped. */
export const positiveIntegerList: ValueType<number[]> = {
  name: 'integers > 0, comma-separated',
  parse(raw) {
    const items = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',').map((p) => p.trim()) : undefined;
    const values = items?.map((v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v));
    if (!values || values.length === 0 || !values.every((v) => typeof v === 'number' && Number.isSafeInteger(v) && v > 0)) {
      fail('a comma-separated list of integers greater than 0, such as 14,7,1', raw);
    }
    return [...new Set(values as number[])].sort((a, b) => b - a);
  },
  format: (v) => v.join(','),
};

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A duration, in milliseconds once parsed: `500ms`, `15s`, `5m`, `1h`, `1.5s`,
 * or a plain number of milliseconds (so the existing `MONCTL_HTTP_TIMEOUT_MS=2000` keeps its meaning).
 */
export const duration: ValueType<number> = {
  name: 'duration',
  parse(raw) {
    const match = typeof raw === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(raw) : null;
    const ms = typeof raw === 'number' ? raw : match ? Number(match[1]) * UNITS[match[2] ?? 'ms'] : NaN;
    if (!Number.isFinite(ms) || ms < 1 || ms > 2 ** 31 - 1)
      fail('a duration such as 500ms, 15s, 5m or 1h (a plain number is milliseconds), from 1ms to 24 days', raw);
    return Math.round(ms);
  },
  format(ms) {
    for (const unit of ['h', 'm', 's'] as const) if (ms % UNITS[unit] === 0) return `${ms / UNITS[unit]}${unit}`;
    return `${ms}ms`;
  },
};

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 };

/** A size in bytes: `512MiB`, `10GiB`, `1.5GiB`, or a plain number of bytes (KiB, MiB, GiB, TiB: powers of 1024). */
export const size: ValueType<number> = {
  name: 'size',
  parse(raw) {
    const match = typeof raw === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*(b|kib|mib|gib|tib)?\s*$/i.exec(raw) : null;
    const bytes = typeof raw === 'number' ? raw : match ? Math.round(Number(match[1]) * SIZE_UNITS[(match[2] ?? '').toLowerCase()]) : NaN;
    if (!Number.isSafeInteger(bytes) || bytes < 1) fail('a size such as 512MiB or 10GiB (or a number of bytes)', raw);
    return bytes;
  },
  format(bytes) {
    for (const unit of ['TiB', 'GiB', 'MiB', 'KiB']) {
      const n = bytes / SIZE_UNITS[unit.toLowerCase()];
      if (Number.isInteger(n)) return `${n}${unit}`;
    }
    return String(bytes);
  },
};

const ON = new Set(['on', 'true', 'yes', '1']);
const OFF = new Set(['off', 'false', 'no', '0']);

/** on/off: YAML booleans, or on|off|true|false|yes|no|1|0 as text. */
export const onOff: ValueType<boolean> = {
  name: 'on|off',
  parse(raw) {
    if (typeof raw === 'boolean') return raw;
    const word = typeof raw === 'string' ? raw.trim().toLowerCase() : undefined;
    if (word !== undefined && ON.has(word)) return true;
    if (word !== undefined && OFF.has(word)) return false;
    return fail('on or off (or true/false)', raw);
  },
  format: (v) => (v ? 'on' : 'off'),
};

export function oneOf<const C extends string>(choices: readonly C[]): ValueType<C> & { choices: readonly C[] } {
  return {
    name: choices.join('|'),
    choices,
    parse(raw) {
      if (typeof raw !== 'string' || !choices.includes(raw as C)) fail(`one of ${choices.join(', ')}`, raw);
      return raw as C;
    },
    format: (v) => v,
  };
}

/** A password: at least 12 characters, like every password of the API. */
export const password: ValueType<string> = {
  name: 'secret',
  parse(raw) {
    if (raw === MASK) throw new Error('is the mask --print-config prints: put the real value here, or set it in the environment');
    // Never echo the value: it is a secret even when it is wrong.
    if (typeof raw !== 'string') throw new Error('must be a string (quote it in YAML)');
    if (raw.length < 12) throw new Error('must be at least 12 characters');
    if (raw.length > 1024) throw new Error('must be at most 1024 characters');
    return raw;
  },
  format: () => MASK,
};

/** A secret of any length (a client secret): masked by --print-config, never echoed when refused. */
export const secret: ValueType<string> = {
  name: 'secret',
  parse(raw) {
    if (raw === MASK) throw new Error('is the mask --print-config prints: put the real value here, or set it in the environment');
    if (typeof raw !== 'string' || raw.trim() === '') throw new Error('must be a non-empty string (quote it in YAML)');
    if (raw.length > 4096) throw new Error('must be at most 4096 characters');
    return raw;
  },
  format: () => MASK,
};

/** Items of a list given as `a,b,c` (flag, env, or YAML text) or as a YAML list. */
function listItems(raw: unknown): unknown[] | undefined {
  if (Array.isArray(raw)) return raw;
  return typeof raw === 'string'
    ? raw
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)
    : undefined;
}

/** IP addresses and CIDR blocks, `10.0.0.0/8,::1` or a YAML list; checked by `check` (true when valid). */
export function cidrList(check: (text: string) => boolean): ValueType<string[]> {
  return {
    name: 'CIDR blocks, comma-separated',
    parse(raw) {
      const items = listItems(raw);
      if (!items || items.length === 0 || !items.every((v) => typeof v === 'string' && check(v))) {
        fail('a comma-separated list of IP addresses or CIDR blocks, such as 10.0.0.0/8,::1', raw);
      }
      return items as string[];
    },
    format: (v) => v.join(','),
  };
}

/** Some of `choices`, in order of preference: `http-01,tls-alpn-01` or a YAML list. */
export function someOf<const C extends string>(choices: readonly C[]): ValueType<C[]> {
  return {
    name: `${choices.join(',')} (some, in order)`,
    parse(raw) {
      const items = listItems(raw);
      if (!items || items.length === 0 || !items.every((v) => choices.includes(v as C)))
        fail(`a comma-separated list of ${choices.join(', ')}`, raw);
      return [...new Set(items as C[])];
    },
    format: (v) => v.join(','),
  };
}

/** A number between 0 and 1, both excluded (a fraction of a lifetime). */
export const fraction: ValueType<number> = {
  name: 'number in (0, 1)',
  parse(raw, text) {
    const value = text && typeof raw === 'string' && /^\s*\d*\.?\d+(e-?\d+)?\s*$/i.test(raw) ? Number(raw) : raw;
    if (typeof value !== 'number' || !(value > 0 && value < 1)) fail('a number between 0 and 1, such as 0.67', raw);
    return value;
  },
  format: (v) => Number(v.toPrecision(6)),
};

/** An email address (one @, something on both sides, no spaces). */
export const email: ValueType<string> = {
  name: 'email address',
  parse(raw) {
    if (typeof raw !== 'string' || !/^[^\s@]+@[^\s@]+$/.test(raw.trim())) fail('an email address', raw);
    return raw.trim();
  },
  format: (v) => v,
};

/**
 * A PostgreSQL connection URL (`postgres://user:password@host:5432/db`, or
 * `postgresql://`, query parameters as libpq/node-postgres read them). Shown
 * by --print-config with its credentials masked (redact-url.ts); the mask is refused as a password.
 */
export const databaseUrl: ValueType<string> = {
  name: 'postgres:// URL',
  parse(raw) {
    if (typeof raw !== 'string') throw new Error('must be a postgres:// URL');
    let url: URL;
    try {
      url = new URL(raw.trim());
    } catch {
      // Never echo the value: it may hold a password.
      throw new Error('must be a postgres:// URL (postgres://user:password@host:5432/database)');
    }
    if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
      throw new Error(`must be a postgres:// URL, got the scheme ${url.protocol}`);
    if (decodeURIComponent(url.password) === MASK)
      throw new Error(
        'holds the mask --print-config prints as its password: put the real one, or leave it out and use PGPASSWORD or ~/.pgpass',
      );
    for (const name of ['password', 'sslpassword']) {
      if (url.searchParams.get(name) === MASK)
        throw new Error(
          `holds the mask --print-config prints as its ${name}: put the real one, or leave it out and use PGPASSWORD or ~/.pgpass`,
        );
    }
    if (url.pathname.length <= 1) throw new Error('must name the database (postgres://host/monctl)');
    return raw.trim();
  },
  masks: true,
  // The password and the credential parameters (?password=, ?sslpassword=) masked.
  format: (v) => redactUrl(v),
};
