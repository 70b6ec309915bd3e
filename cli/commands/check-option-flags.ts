import type { Command } from 'commander';
import { DNS_RECORD_TYPES, STARTTLS_PROTOCOLS, TLS_VERSIONS } from '../../src/api/kinds.ts';
import { usage } from '../../src/errors.ts';
import { parseGoDuration } from '../../src/probes/conditions/go-values.ts';
import type { FlagNames } from '../api/flag-errors.ts';
import { HEADER_NAME } from './http-check-flags.ts';

/**
 * The flags of the protocol checks' own options (docs/API.md#check-types), and the option object
 * they make (`--record-type MX` → `dns: {recordType: 'MX'}`). A flag of another type is a usage
 * error naming the flag and the types it is for, before any request. On update the object holds
 * only the fields given (PATCH merges them), and `--reset-options` sends null: the defaults again.
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

type Key = Exclude<keyof CheckOptionFlags, 'resetOptions' | 'skipTls'>;
type Options = Record<string, unknown>;

/** Each flag, as typed (`--no-…` when false), and the types it is for. */
const FLAGS: Record<Key, [flag: string, off: string | null, types: string[]]> = {
  recordType: ['--record-type', null, ['DNS']],
  resolver: ['--resolver', '--no-resolver', ['DNS']],
  dnsTcp: ['--dns-tcp', '--no-dns-tcp', ['DNS']],
  count: ['--count', null, ['PING']],
  pingInterval: ['--ping-interval', null, ['PING']],
  ipv4: ['--ipv4', null, ['PING']],
  ipv6: ['--ipv6', null, ['PING']],
  starttls: ['--starttls', '--no-starttls', ['TLS']],
  sni: ['--sni', '--no-sni', ['TLS']],
  minTls: ['--min-tls', null, ['TLS']],
  send: ['--send', '--no-send', ['UDP', 'TCP', 'WEBSOCKET']],
  sendHex: ['--send-hex', null, ['UDP', 'TCP']],
  expect: ['--expect', '--no-expect', ['TCP']],
  expectHex: ['--expect-hex', null, ['TCP']],
  expectRegex: ['--expect-regex', null, ['TCP']],
  grpcService: ['--grpc-service', null, ['GRPC']],
  grpcTls: ['--grpc-tls', '--no-grpc-tls', ['GRPC']],
  wsHeader: ['--ws-header', null, ['WEBSOCKET']],
  wsHeaders: ['--ws-header', '--no-ws-headers', ['WEBSOCKET']],
};

/** The API's option field of each type that has options. */
export const OPTION_FIELD: Record<string, string> = {
  DNS: 'dns',
  PING: 'ping',
  TLS: 'tls',
  UDP: 'udp',
  TCP: 'tcp',
  GRPC: 'grpc',
  WEBSOCKET: 'websocket',
};

/** The daemon's fields as these flags name them (`dns.recordType` in a 400 reads `--record-type`). */
export const CHECK_OPTION_FLAG_NAMES: FlagNames = {
  'dns.recordType': '--record-type',
  'dns.resolver': '--resolver',
  'dns.transport': '--dns-tcp',
  'ping.count': '--count',
  'ping.intervalMs': '--ping-interval',
  'ping.family': '--ipv4/--ipv6',
  'tls.starttls': '--starttls',
  'tls.sni': '--sni',
  'tls.minVersion': '--min-tls',
  'udp.send': '--send',
  'tcp.send': '--send',
  'tcp.expect': '--expect',
  'grpc.service': '--grpc-service',
  'websocket.headers': '--ws-header',
  'websocket.send': '--send',
};

const collect = (value: string, previous: string[] = []) => [...previous, value];
const list = (items: readonly string[]) => (items.length > 1 ? `${items.slice(0, -1).join(', ')} or ${items.at(-1)}` : items[0]);

/** The flags `resources add|test` take; `update` adds the ways back to a default. */
export function checkOptionFlags(cmd: Command, update = false): Command {
  cmd
    .option('--record-type <type>', `DNS: the record type asked for: ${DNS_RECORD_TYPES.join(', ')} (default A)`)
    .option('--resolver <host:port>', "DNS: the resolver asked (port 53 when left out; default the system's)")
    .option('--dns-tcp', 'DNS: ask over TCP (default UDP)')
    .option('--count <n>', 'PING: echoes per check, 1 to 10 (default 3)')
    .option('--ping-interval <duration>', 'PING: time between two echoes, 20ms to 1s (default 200ms)')
    .option('--ipv4', 'PING: echo over IPv4 only')
    .option('--ipv6', 'PING: echo over IPv6 only')
    .option('--starttls <protocol>', `TLS: upgrade a plain connection first: ${list(STARTTLS_PROTOCOLS)}`)
    .option('--sni <name>', "TLS: the server name sent and verified (default the target's host)")
    .option('--min-tls <version>', 'TLS: the lowest version accepted: 1, 1.1, 1.2 or 1.3 (default 1.2)')
    .option('--send <text>', 'UDP, TCP, WEBSOCKET: text sent once connected (UDP: the datagram)')
    .option('--send-hex <hex>', 'UDP, TCP: bytes sent, in hex: 0a0b or "0a 0b"')
    .option('--expect <text>', 'TCP: the text the first bytes received begin with')
    .option('--expect-hex <hex>', 'TCP: the bytes they begin with, in hex')
    .option('--expect-regex <regex>', 'TCP: a regular expression they match')
    .option('--grpc-service <name>', 'GRPC: the service whose health is asked (default the server)')
    .option('--grpc-tls', 'GRPC: over TLS (default plaintext)')
    .option('--ws-header <name: value>', 'WEBSOCKET: an extra handshake header (repeatable; replaces them)', collect);
  if (update) {
    cmd
      .option('--no-resolver', "DNS: the system's resolver again")
      .option('--no-dns-tcp', 'DNS: ask over UDP')
      .option('--no-starttls', 'TLS: TLS from the first byte')
      .option('--no-sni', "TLS: the target's host as the server name")
      .option('--no-send', 'UDP, TCP, WEBSOCKET: send nothing')
      .option('--no-expect', 'TCP: expect nothing (with no --send: a plain connect check)')
      .option('--no-grpc-tls', 'GRPC: plaintext')
      .option('--no-ws-headers', 'WEBSOCKET: no extra headers')
      .option('--reset-options', "the type's options back to their defaults");
  }
  return cmd;
}

/** The flags given; commander makes `--no-ws-headers`, which has no positive form, true when absent. */
const given = (f: CheckOptionFlags) =>
  (Object.keys(FLAGS) as Key[]).filter((k) => (k === 'wsHeaders' ? f[k] === false : f[k] !== undefined));

/** True when a flag of some type's options was given (update then needs the stored type). */
export const hasCheckOptionFlags = (f: CheckOptionFlags) => given(f).length > 0 || f.resetOptions === true;

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

function atMostOne(f: CheckOptionFlags, keys: Key[]): void {
  const set = keys.filter((k) => f[k] !== undefined);
  if (set.length > 1) usage(`give one of ${keys.map((k) => FLAGS[k][0]).join(', ')}, not ${set.length}`);
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
function fields(type: string, f: CheckOptionFlags): Options {
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

/**
 * The option object of `type` the flags make, as `{dns: {...}}`, or nothing when no such flag
 * was given. Usage errors for a flag of another type, and for values out of range.
 */
export function checkOptionsBody(type: string, f: CheckOptionFlags): Options {
  for (const k of given(f)) {
    const [flag, off, types] = FLAGS[k];
    if (!types.includes(type)) usage(`${f[k] === false && off ? off : flag} is for ${list(types)} checks, not ${type}`);
  }
  // As the daemon says (docs/API.md#check-types); on update without --type, its 400 says it.
  if (f.skipTls && ['DNS', 'PING', 'UDP', 'SSH'].includes(type))
    usage(`--skip-tls is for HTTP, DOCKER, TCP, TLS, GRPC or WEBSOCKET checks, not ${type}: a ${type} check makes no TLS connection`);
  const field = OPTION_FIELD[type];
  if (f.resetOptions) {
    if (!field) usage(`--reset-options: a ${type} resource has no options of its own`);
    if (given(f).length) usage('give --reset-options or option flags, not both (reset, then update again)');
    return { [field]: null };
  }
  const o = field ? fields(type, f) : {};
  return Object.keys(o).length ? { [field]: o } : {};
}
