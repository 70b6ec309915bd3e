import { DNS_RECORD_TYPES, STARTTLS_PROTOCOLS, TLS_VERSIONS } from '../../src/api/kinds.ts';
import { usage } from '../../src/errors.ts';
import { parseGoDuration } from '../../src/probes/conditions/go-values.ts';
import { HEADER_NAME } from './http-check-flags.ts';

/**
 * The values of the option flags (cli/commands/check-option-flags.ts) as the API takes them, each
 * checked before any request: enums in the API's spelling (`mx` → `MX`, `1.3` → `TLSv1.3`), hex
 * normalised (`0A 0b:ff` → `0a0bff`), durations in ms, a regex compiled, one flag of a kind.
 * `CheckOptionFlags`: the flags as commander gives them (`--no-…`: false).
 */
export interface CheckOptionFlags {
  recordType?: string;
  /** `--no-resolver`: false. */
  resolver?: string | false;
  dnsTcp?: boolean;
  count?: string;
  pingInterval?: string;
  ipv4?: boolean;
  ipv6?: boolean;
  starttls?: string | false;
  sni?: string | false;
  minTls?: string;
  send?: string | false;
  sendHex?: string;
  expect?: string | false;
  expectHex?: string;
  expectRegex?: string;
  grpcService?: string;
  grpcTls?: boolean;
  wsHeader?: string[];
  /** `--no-ws-headers`: false (true when not given). */
  wsHeaders?: boolean;
  resetOptions?: boolean;
  /** The resource's `--skip-tls`, refused here on the types that make no TLS connection. */
  skipTls?: boolean;
}

type Options = Record<string, unknown>;

/** `0a 0B:ff` → `0a0bff`; a usage error unless whole bytes of hex digits. */
function hex(flag: string, text: string): string {
  const digits = text.replace(/[\s:]/g, '').toLowerCase();
  if (!/^(?:[0-9a-f]{2})+$/.test(digits)) usage(`${flag} takes bytes in hex (0a0b, "0a 0b"), not "${text}"`);
  return digits;
}

function oneOf<T extends string>(flag: string, text: string, values: readonly T[], normal = text): T {
  const found = values.find((v) => v.toLowerCase() === normal.toLowerCase());
  if (!found) usage(`${flag} must be one of ${values.join(', ')}, not "${text}"`);
  return found;
}

/** `sendHex` → `--send-hex`: the flags' names are their keys, kebab-cased. */
const flagOf = (key: string) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

function atMostOne(f: CheckOptionFlags, keys: Array<keyof CheckOptionFlags>): void {
  const set = keys.filter((k) => f[k] !== undefined);
  if (set.length > 1) usage(`give one of ${keys.map(flagOf).join(', ')}, not ${set.length}`);
}

/** `Name: value` or `Name=value` (neither `:` nor `=` can be in a header's name). */
function wsHeaders(items: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const at = item.search(/[:=]/);
    const name = item.slice(0, Math.max(at, 0)).trim();
    if (at < 1 || !HEADER_NAME.test(name)) usage(`--ws-header takes 'Name: value', not "${item}"`);
    const value = item.slice(at + 1).trim();
    if (/[\r\n\0]/.test(value)) usage(`--ws-header ${name}: the value must not hold CR, LF or NUL`);
    out[name] = value;
  }
  return out;
}

/** The fields of each type's object that the flags set (only those given). */
export function optionFields(type: string, f: CheckOptionFlags): Options {
  const o: Options = {};
  const payload = (nothing: string | null) => {
    atMostOne(f, ['send', 'sendHex']);
    if (f.send === false) Object.assign(o, { send: nothing, ...(type === 'WEBSOCKET' ? {} : { sendEncoding: 'text' }) });
    else if (f.send !== undefined) Object.assign(o, { send: f.send, ...(type === 'WEBSOCKET' ? {} : { sendEncoding: 'text' }) });
    if (f.sendHex !== undefined) Object.assign(o, { send: hex('--send-hex', f.sendHex), sendEncoding: 'hex' });
  };
  if (type === 'DNS') {
    if (f.recordType !== undefined) o.recordType = oneOf('--record-type', f.recordType, DNS_RECORD_TYPES);
    if (f.resolver !== undefined) o.resolver = f.resolver === false ? null : f.resolver;
    if (f.dnsTcp !== undefined) o.transport = f.dnsTcp ? 'tcp' : 'udp';
  } else if (type === 'PING') {
    if (f.count !== undefined) {
      if (!/^\d+$/.test(f.count) || Number(f.count) < 1 || Number(f.count) > 10) usage(`--count must be 1 to 10, not "${f.count}"`);
      o.count = Number(f.count);
    }
    if (f.pingInterval !== undefined) {
      const ms = /^\d+$/.test(f.pingInterval) ? Number(f.pingInterval) : parseGoDuration(f.pingInterval);
      if (ms === null || !Number.isInteger(ms) || ms < 20 || ms > 1000)
        usage(`--ping-interval must be whole milliseconds from 20ms to 1s (200ms, 0.5s, or ms), not "${f.pingInterval}"`);
      o.intervalMs = ms;
    }
    atMostOne(f, ['ipv4', 'ipv6']);
    if (f.ipv4 || f.ipv6) o.family = f.ipv4 ? 'ipv4' : 'ipv6';
  } else if (type === 'TLS') {
    if (f.starttls !== undefined) o.starttls = f.starttls === false ? null : oneOf('--starttls', f.starttls, STARTTLS_PROTOCOLS);
    if (f.sni !== undefined) o.sni = f.sni === false ? null : f.sni;
    if (f.minTls !== undefined) {
      const v = f.minTls.replace(/^(tls)?v?/i, '');
      o.minVersion = oneOf('--min-tls', f.minTls, TLS_VERSIONS, `TLSv${v}`);
    }
  } else if (type === 'UDP') payload('');
  else if (type === 'TCP') {
    payload(null);
    atMostOne(f, ['expect', 'expectHex', 'expectRegex']);
    if (f.expect === false) o.expect = null;
    else if (f.expect !== undefined) Object.assign(o, { expect: f.expect, expectKind: 'text' });
    if (f.expectHex !== undefined) Object.assign(o, { expect: hex('--expect-hex', f.expectHex), expectKind: 'hex' });
    if (f.expectRegex !== undefined) {
      try {
        new RegExp(f.expectRegex);
      } catch (err) {
        usage(`--expect-regex: ${(err as Error).message}`);
      }
      Object.assign(o, { expect: f.expectRegex, expectKind: 'regex' });
    }
  } else if (type === 'GRPC') {
    if (f.grpcService !== undefined) {
      if (!/^[A-Za-z0-9_.]*$/.test(f.grpcService)) usage(`--grpc-service takes a service name (A-Z a-z 0-9 _ .), not "${f.grpcService}"`);
      o.service = f.grpcService;
    }
    if (f.grpcTls !== undefined) o.tls = f.grpcTls;
  } else if (type === 'WEBSOCKET') {
    payload(null);
    if (f.wsHeader && f.wsHeaders === false) usage('give --ws-header or --no-ws-headers, not both');
    if (f.wsHeader) o.headers = wsHeaders(f.wsHeader);
    if (f.wsHeaders === false) o.headers = {};
  }
  return o;
}
