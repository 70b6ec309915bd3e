import { type TSchema, Type } from '@sinclair/typebox';
import {
  DNS_RECORD_TYPES,
  DNS_TRANSPORTS,
  EXPECT_KINDS,
  IP_FAMILIES,
  PAYLOAD_ENCODINGS,
  STARTTLS_PROTOCOLS,
  TLS_VERSIONS,
} from '../kinds.ts';
import { StringEnum } from './common.ts';

/**
 * The protocol checks' own options (docs/API.md#check-types): one object per type, named after
 * the type in lower case, as Gatus names its `dns:` and `ssh:` blocks. Create takes the fields it
 * sets (the rest are their defaults); PATCH takes the same, merged over the stored ones, or null to
 * go back to the defaults. An object for another type than the resource's is a 400 naming it.
 * Reads (admin views) show the resource's own object with every field, and no other.
 */

/** Longest payload (`udp.send`, `tcp.send`, `websocket.send`), in bytes once decoded. */
export const MAX_PAYLOAD_BYTES = 4096;
/** Longest `tcp.expect`, in characters (a regex is compiled once per resource). */
export const MAX_EXPECT_LENGTH = 1024;
export const MAX_WEBSOCKET_HEADERS = 32;

const Payload = (what: string) =>
  Type.String({ maxLength: 2 * MAX_PAYLOAD_BYTES, description: `${what}, at most ${MAX_PAYLOAD_BYTES} bytes once decoded` });
const HostPort = Type.String({
  minLength: 1,
  maxLength: 300,
  description: '`host:port`, `[v6]:port` or `host` (port 53)',
});

const object = (properties: Record<string, TSchema>, title: string, description: string) =>
  Type.Object(properties, { additionalProperties: false, title, description });

export const DnsOptions = object(
  {
    recordType: Type.Optional(StringEnum(DNS_RECORD_TYPES, { description: 'the record type asked for (default A)' })),
    resolver: Type.Optional(Type.Union([HostPort, Type.Null()], { description: "the resolver asked; null: the system's (default)" })),
    transport: Type.Optional(StringEnum(DNS_TRANSPORTS, { description: 'udp (default) or tcp' })),
  },
  'DnsOptions',
  'DNS: the question and where it goes',
);
export const PingOptions = object(
  {
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, description: 'echoes per check (default 3)' })),
    intervalMs: Type.Optional(Type.Integer({ minimum: 20, maximum: 1000, description: 'ms between two echoes (default 200)' })),
    family: Type.Optional(StringEnum(IP_FAMILIES, { description: 'auto (default), ipv4 or ipv6' })),
  },
  'PingOptions',
  'PING: the echoes of one check',
);
export const TlsOptions = object(
  {
    starttls: Type.Optional(
      Type.Union([StringEnum(STARTTLS_PROTOCOLS), Type.Null()], {
        description: 'smtp, imap, pop3, ftp, postgres or ldap: upgrade a plain connection first; null: TLS from the start (default)',
      }),
    ),
    sni: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 253 }), Type.Null()], {
        description: "the server name sent and verified; null: the target's host (default)",
      }),
    ),
    minVersion: Type.Optional(StringEnum(TLS_VERSIONS, { description: 'the lowest version accepted (default TLSv1.2)' })),
  },
  'TlsOptions',
  'TLS: the handshake (skipTLS: do not verify the certificate)',
);
export const UdpOptions = object(
  {
    send: Type.Optional(Payload('the datagram sent (default empty)')),
    sendEncoding: Type.Optional(StringEnum(PAYLOAD_ENCODINGS, { description: 'text (UTF-8, the default) or hex' })),
  },
  'UdpOptions',
  'UDP: the datagram sent; any datagram back within the timeout is an answer',
);
export const TcpOptions = object(
  {
    send: Type.Optional(Type.Union([Payload('bytes sent once connected'), Type.Null()])),
    sendEncoding: Type.Optional(StringEnum(PAYLOAD_ENCODINGS, { description: 'text (UTF-8, the default) or hex' })),
    expect: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: MAX_EXPECT_LENGTH }), Type.Null()], {
        description: 'what the first bytes received must be: text or hex they begin with, or a regex they match',
      }),
    ),
    expectKind: Type.Optional(StringEnum(EXPECT_KINDS, { description: 'text (the default), hex or regex' })),
  },
  'TcpOptions',
  'TCP: bytes to send and the answer expected; without both, the seed connect check',
);
export const GrpcOptions = object(
  {
    service: Type.Optional(
      Type.String({ maxLength: 256, pattern: '^[A-Za-z0-9_.]*$', description: "the service asked about; '' (default): the server" }),
    ),
    tls: Type.Optional(Type.Boolean({ description: 'TLS (default false: plaintext)' })),
  },
  'GrpcOptions',
  'GRPC: the grpc.health.v1 question',
);
export const WebSocketOptions = object(
  {
    headers: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 8192, pattern: '^[^\\r\\n\\u0000]*$' }), {
        maxProperties: MAX_WEBSOCKET_HEADERS,
        description: 'extra handshake headers (shown in reads)',
      }),
    ),
    send: Type.Optional(Type.Union([Payload('a text message sent after the handshake'), Type.Null()])),
  },
  'WebSocketOptions',
  'WEBSOCKET: the handshake and a first message',
);

/** The API field of each type that has options, and its schema. */
export const OPTION_SCHEMAS = {
  dns: DnsOptions,
  ping: PingOptions,
  tls: TlsOptions,
  udp: UdpOptions,
  tcp: TcpOptions,
  grpc: GrpcOptions,
  websocket: WebSocketOptions,
} as const;
export type OptionField = keyof typeof OPTION_SCHEMAS;

/** The fields as create takes them (nullable: PATCH, where null goes back to the defaults). */
export function checkOptionFields(nullable: boolean) {
  const field = <T extends TSchema>(schema: T) => Type.Optional(nullable ? Type.Union([schema, Type.Null()]) : schema);
  return {
    dns: field(DnsOptions),
    ping: field(PingOptions),
    tls: field(TlsOptions),
    udp: field(UdpOptions),
    tcp: field(TcpOptions),
    grpc: field(GrpcOptions),
    websocket: field(WebSocketOptions),
  };
}

/** Admin reads: the resource's own object, every field filled in; the other types' are absent. */
export const CheckOptionsView = checkOptionFields(false);
