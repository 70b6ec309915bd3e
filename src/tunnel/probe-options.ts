/**
 * A remote check's `options` (probe protocol 2; docs/API.md#check-types), read by the agent field by
 * field with plain code: the agent's bundle carries no schema library. The daemon sends the type's
 * object whole, defaults filled in, so every field must be there; caps are at least the API's
 * (src/api/schemas/check-options.ts), as plain numbers. A wrong field is a sentence naming it,
 * never a throw.
 */
import {
  DNS_RECORD_TYPES,
  DNS_TRANSPORTS,
  EXPECT_KINDS,
  IP_FAMILIES,
  PAYLOAD_ENCODINGS,
  STARTTLS_PROTOCOLS,
  TLS_VERSIONS,
} from '../api/kinds.ts';
import type { CheckOptions, CheckOptionsByType } from '../probes/types.ts';

/** A payload of 4,096 bytes written as hex is 8,192 characters (the API's maxLength). */
const MAX_PAYLOAD_CHARS = 8192;
const MAX_EXPECT_CHARS = 1024;
const MAX_HOST_PORT_CHARS = 300;
const MAX_NAME_CHARS = 253;
const MAX_SERVICE_CHARS = 256;
const MAX_HEADERS = 32;
const MAX_HEADER_VALUE_CHARS = 8192;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;

type Fields = Record<string, unknown>;
/** Reads one field onto the out object, or says what is wrong with it. */
type FieldRule = (value: unknown) => { ok: unknown } | string;

const oneOf =
  (values: readonly string[]): FieldRule =>
  (v) =>
    typeof v === 'string' && values.includes(v) ? { ok: v } : `must be one of ${values.join(', ')}`;
const text =
  (max: number, nullable: boolean): FieldRule =>
  (v) =>
    (v === null && nullable) || (typeof v === 'string' && v.length <= max)
      ? { ok: v }
      : `must be ${nullable ? 'null or ' : ''}text of at most ${max} characters`;
const nonEmpty =
  (max: number): FieldRule =>
  (v) =>
    v === null || (typeof v === 'string' && v.length >= 1 && v.length <= max)
      ? { ok: v }
      : `must be null or text of 1 to ${max} characters`;
const int =
  (min: number, max: number): FieldRule =>
  (v) =>
    Number.isInteger(v) && (v as number) >= min && (v as number) <= max ? { ok: v } : `must be a whole number from ${min} to ${max}`;
const bool: FieldRule = (v) => (typeof v === 'boolean' ? { ok: v } : 'must be a boolean');

/** Extra handshake headers: HTTP token names, values without CR, LF or NUL. */
const headers: FieldRule = (v) => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'must be an object of header names and values';
  const entries = Object.entries(v);
  if (entries.length > MAX_HEADERS) return `must have at most ${MAX_HEADERS} headers`;
  const out: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (!TOKEN.test(name)) return 'must have HTTP token names';
    if (typeof value !== 'string' || value.length > MAX_HEADER_VALUE_CHARS || /[\r\n\0]/.test(value))
      return `must have values of at most ${MAX_HEADER_VALUE_CHARS} characters without CR, LF or NUL`;
    out[name] = value;
  }
  return { ok: out };
};

const RULES: { [T in keyof CheckOptionsByType]: Record<keyof CheckOptionsByType[T], FieldRule> } = {
  DNS: { recordType: oneOf(DNS_RECORD_TYPES), resolver: nonEmpty(MAX_HOST_PORT_CHARS), transport: oneOf(DNS_TRANSPORTS) },
  PING: { count: int(1, 10), intervalMs: int(20, 1000), family: oneOf(IP_FAMILIES) },
  TLS: {
    starttls: (v) => (v === null ? { ok: v } : oneOf(STARTTLS_PROTOCOLS)(v)),
    sni: nonEmpty(MAX_NAME_CHARS),
    minVersion: oneOf(TLS_VERSIONS),
  },
  UDP: { send: text(MAX_PAYLOAD_CHARS, false), sendEncoding: oneOf(PAYLOAD_ENCODINGS) },
  TCP: {
    send: text(MAX_PAYLOAD_CHARS, true),
    sendEncoding: oneOf(PAYLOAD_ENCODINGS),
    expect: nonEmpty(MAX_EXPECT_CHARS),
    expectKind: oneOf(EXPECT_KINDS),
  },
  GRPC: {
    service: (v) =>
      typeof v === 'string' && v.length <= MAX_SERVICE_CHARS && /^[A-Za-z0-9_.]*$/.test(v) ? { ok: v } : 'must be a service name',
    tls: bool,
  },
  WEBSOCKET: { headers, send: text(MAX_PAYLOAD_CHARS, true) },
};

/** Whether checks of `type` take options (the protocol types and TCP). */
export const takesOptions = (type: string): type is keyof CheckOptionsByType => Object.hasOwn(RULES, type);

/** The options of a check of `type`; a string (`options.count must be …`) says what is wrong. */
export function parseCheckOptions(type: string, value: unknown): CheckOptions | string {
  if (!takesOptions(type)) return `options are not for ${type} checks`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'options must be an object';
  const given = value as Fields;
  const out: Fields = {};
  for (const [key, rule] of Object.entries(RULES[type] as Record<string, FieldRule>)) {
    const read = rule(given[key]);
    if (typeof read === 'string') return `options.${key} ${read}`;
    out[key] = read.ok;
  }
  return out as unknown as CheckOptions;
}
