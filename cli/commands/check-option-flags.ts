import type { Command } from 'commander';
import { DNS_RECORD_TYPES, STARTTLS_PROTOCOLS } from '../../src/api/kinds.ts';
import { usage } from '../../src/errors.ts';
import type { FlagNames } from '../api/flag-errors.ts';
import { type CheckOptionFlags, optionFields } from './check-option-values.ts';

/**
 * The flags of the protocol checks' own options (docs/API.md#check-types), and the option object
 * they make (`--record-type MX` → `dns: {recordType: 'MX'}`). A flag of another type is a usage
 * error naming the flag and the types it is for, before any request. On update the object holds
 * only the fields given (PATCH merges them), and `--reset-options` sends null: the defaults again.
 */

export type { CheckOptionFlags };

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
  const o = field ? optionFields(type, f) : {};
  return Object.keys(o).length ? { [field]: o } : {};
}
