import {
  DNS_RECORD_TYPES,
  DNS_TRANSPORTS,
  EXPECT_KINDS,
  IP_FAMILIES,
  PAYLOAD_ENCODINGS,
  STARTTLS_PROTOCOLS,
  TLS_VERSIONS,
} from '../../src/api/kinds.ts';
import { HEADER_NAME } from '../commands/http-check-flags.ts';
import { OPTION_FIELD } from '../commands/check-option-flags.ts';

/**
 * A protocol check's options in a `resources:` entry (docs/API.md#check-types), as the API names
 * them: `dns: {recordType: MX}` on a DNS resource. Checked for shape here (the daemon checks again,
 * naming the field); the fields the file gives are managed, the others are not, so the defaults
 * that reads fill in never show as a change.
 */
export interface CheckOptionsSpec {
  /** `dns`, `ping`, …: the type's field. */
  field: string;
  value: Record<string, unknown>;
}

type Obj = Record<string, unknown>;
type Err = (path: string, msg: string) => void;
/** An error message, or undefined when the value is good. */
type Check = (v: unknown) => string | undefined;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const oneOf =
  (values: readonly string[], nullable = false): Check =>
  (v) =>
    (nullable && v === null) || values.includes(v as string)
      ? undefined
      : `must be one of ${values.join(', ')}${nullable ? ', or null' : ''}`;
const int =
  (min: number, max: number): Check =>
  (v) =>
    Number.isInteger(v) && (v as number) >= min && (v as number) <= max ? undefined : `must be an integer from ${min} to ${max}`;
const text =
  (max: number, nullable: boolean, min = 0): Check =>
  (v) =>
    (nullable && v === null) || (typeof v === 'string' && v.length >= min && v.length <= max)
      ? undefined
      : `must be text of ${min ? `${min} to ` : 'at most '}${max} characters${nullable ? ', or null' : ''}`;
const bool: Check = (v) => (typeof v === 'boolean' ? undefined : 'must be true or false');
const headers: Check = (v) =>
  isObj(v) && Object.entries(v).every(([k, x]) => HEADER_NAME.test(k) && typeof x === 'string' && !/[\r\n\0]/.test(x))
    ? undefined
    : 'must be a mapping of header names to values (no CR, LF or NUL)';
const PAYLOAD = 8192;

/** The fields of each type's object and what each takes (limits as in docs/API.md#check-types). */
const FIELDS: Record<string, Record<string, Check>> = {
  dns: { recordType: oneOf(DNS_RECORD_TYPES), resolver: text(300, true, 1), transport: oneOf(DNS_TRANSPORTS) },
  ping: { count: int(1, 10), intervalMs: int(20, 1000), family: oneOf(IP_FAMILIES) },
  tls: { starttls: oneOf(STARTTLS_PROTOCOLS, true), sni: text(253, true, 1), minVersion: oneOf(TLS_VERSIONS) },
  udp: { send: text(PAYLOAD, false), sendEncoding: oneOf(PAYLOAD_ENCODINGS) },
  tcp: { send: text(PAYLOAD, true), sendEncoding: oneOf(PAYLOAD_ENCODINGS), expect: text(1024, true, 1), expectKind: oneOf(EXPECT_KINDS) },
  grpc: { service: (v) => (typeof v === 'string' && /^[A-Za-z0-9_.]{0,256}$/.test(v) ? undefined : 'must be a service name'), tls: bool },
  websocket: { headers, send: text(PAYLOAD, true) },
};

/** The option field names, for the file's list of known fields. */
export const CHECK_OPTION_KEYS = Object.keys(FIELDS);

export function validateCheckOptions(p: string, r: Obj, type: string | undefined, err: Err): CheckOptionsSpec | undefined {
  let spec: CheckOptionsSpec | undefined;
  for (const field of CHECK_OPTION_KEYS) {
    const v = r[field];
    if (v === undefined) continue;
    const owner = Object.keys(OPTION_FIELD).find((t) => OPTION_FIELD[t] === field)!;
    if (type !== undefined && OPTION_FIELD[type] !== field) {
      err(`${p}.${field}`, `is for ${owner} resources`);
      continue;
    }
    if (!isObj(v)) {
      err(`${p}.${field}`, `must be a mapping of ${Object.keys(FIELDS[field]).join(', ')} (leave it out for the defaults)`);
      continue;
    }
    for (const [k, x] of Object.entries(v)) {
      const check = FIELDS[field][k];
      const problem = check ? check(x) : `unknown field (${field} takes ${Object.keys(FIELDS[field]).join(', ')})`;
      if (problem) err(`${p}.${field}.${k}`, problem);
    }
    spec = { field, value: v };
  }
  return spec;
}

/** The field of a new resource (or of one whose type changes: the old type's options are dropped). */
export const checkOptionsCreate = (spec: CheckOptionsSpec | undefined): Obj => (spec ? { [spec.field]: spec.value } : {});

/** `{a: 1}` and `{A: 1}` alike: header names are not case-sensitive. */
const same = (k: string, a: unknown, b: unknown) =>
  k === 'headers' && isObj(a) && isObj(b)
    ? JSON.stringify(
        Object.entries(a)
          .map(([n, v]) => [n.toLowerCase(), v])
          .sort(),
      ) ===
      JSON.stringify(
        Object.entries(b)
          .map(([n, v]) => [n.toLowerCase(), v])
          .sort(),
      )
    : JSON.stringify(a) === JSON.stringify(b);

/**
 * What differs from the daemon's object (`dns.recordType`, for the plan) and the PATCH that makes
 * it match: only the fields that differ, which PATCH merges over the stored ones. The whole object
 * when the type changes, or when the daemon shows none.
 */
export function checkOptionsDiff(spec: CheckOptionsSpec | undefined, cur: Obj, typeChanged: boolean): { changes: string[]; patch: Obj } {
  if (!spec) return { changes: [], patch: {} };
  const stored = cur[spec.field];
  if (typeChanged || !isObj(stored)) return { changes: [spec.field], patch: checkOptionsCreate(spec) };
  const differ = Object.entries(spec.value).filter(([k, v]) => !same(k, v, stored[k]));
  if (differ.length === 0) return { changes: [], patch: {} };
  return { changes: differ.map(([k]) => `${spec.field}.${k}`), patch: { [spec.field]: Object.fromEntries(differ) } };
}
