/**
 * The probe interface: one check of one target, nothing written. The
 * scheduler and `POST /api/resources/{id}/check` both call `probe()` and hand
 * the result to the result writer (daemon/probes/results.ts).
 */
import type {
  DNS_RECORD_TYPES,
  DNS_TRANSPORTS,
  EXPECT_KINDS,
  IP_FAMILIES,
  PAYLOAD_ENCODINGS,
  STARTTLS_PROTOCOLS,
  TLS_VERSIONS,
} from '../api/kinds.ts';

/** The types a probe checks (every resource type but PUSH, which waits for pings). */
export type ResourceType = 'HTTP' | 'TCP' | 'DOCKER' | 'DNS' | 'PING' | 'TLS' | 'UDP' | 'GRPC' | 'WEBSOCKET' | 'SSH';

/**
 * Each type's own options as stored and as a probe gets them: every field present, defaults
 * filled in (docs/API.md#check-types). The API's create and PATCH take them as an object named
 * after the type in lower case (`dns: {recordType: 'MX'}`).
 */
export interface DnsOptions {
  recordType: (typeof DNS_RECORD_TYPES)[number];
  /** `host:port` or `[v6]:port` (port 53 when left out); null: the system's resolvers. */
  resolver: string | null;
  transport: (typeof DNS_TRANSPORTS)[number];
}
export interface PingOptions {
  /** Echoes per check, 1 to 10. */
  count: number;
  /** Between two echoes of one check, ms. */
  intervalMs: number;
  family: (typeof IP_FAMILIES)[number];
}
export interface TlsOptions {
  /** null: TLS from the first byte. */
  starttls: (typeof STARTTLS_PROTOCOLS)[number] | null;
  /** The name sent and verified; null: the target's host (none for an IP address). */
  sni: string | null;
  minVersion: (typeof TLS_VERSIONS)[number];
}
export interface UdpOptions {
  /** The datagram sent, as `sendEncoding` says; may be empty. */
  send: string;
  sendEncoding: (typeof PAYLOAD_ENCODINGS)[number];
}
/** TCP without these (null) stays the seed's connect check. */
export interface TcpOptions {
  send: string | null;
  sendEncoding: (typeof PAYLOAD_ENCODINGS)[number];
  expect: string | null;
  expectKind: (typeof EXPECT_KINDS)[number];
}
export interface GrpcOptions {
  /** The service asked about; '' is the server as a whole. */
  service: string;
  /** TLS (verified unless skipTLS) or plaintext. */
  tls: boolean;
}
export interface WebSocketOptions {
  /** Extra handshake headers, shown in reads. */
  headers: Record<string, string>;
  /** A text message sent once the handshake is done; null: none. */
  send: string | null;
}
export interface CheckOptionsByType {
  DNS: DnsOptions;
  PING: PingOptions;
  TLS: TlsOptions;
  UDP: UdpOptions;
  TCP: TcpOptions;
  GRPC: GrpcOptions;
  WEBSOCKET: WebSocketOptions;
}
export type CheckOptions = CheckOptionsByType[keyof CheckOptionsByType];

export interface ProbeInput {
  resourceId: number;
  type: ResourceType;
  target: string;
  skipTLS: boolean;
  recursive: boolean;
  /** The resource's conditions as written (docs/DECISIONS.md#probe-conditions); absent or empty: the seed's check. */
  conditions?: readonly string[];
  /** HTTP: the request and the expected answer beyond the seed's GET and 2xx (docs/API.md#resource-fields); absent: the seed's check. */
  http?: HttpRequestSpec;
  /** This resource's whole-check timeout (`timeoutSeconds`); absent: the runner's (`--http-timeout`, 15 s). */
  timeoutMs?: number;
  /** AVAILABLE exactly when the check would otherwise fail (any type), the message saying so. */
  upsideDown?: boolean;
  /** The type's own options (CheckOptionsByType[type]), defaults filled in; absent for HTTP, DOCKER, SSH and a plain TCP connect. */
  options?: CheckOptions;
}

export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/**
 * An HTTP check's request and expected answer. Secrets (secret headers, the password or token,
 * the client key) arrive here opened: they live only in memory, in the check, and never in a
 * result, a report, a log line or an event.
 */
export interface HttpRequestSpec {
  method: HttpMethod;
  /** Plain and secret headers together, names as written, in order. */
  headers: [name: string, value: string][];
  /** The names of the secret ones: they go to the check's own origin only (redirects.ts). Absent: none. */
  secretHeaders?: string[];
  /** The request body (text, at most 64 KiB) and its content type; null: none. */
  body: string | null;
  contentType: string | null;
  auth: { type: 'basic'; username: string; password: string } | { type: 'bearer'; token: string } | null;
  /** PEM client certificate (chain) and key for mTLS; null: none. */
  clientCert: { cert: string; key: string } | null;
  /** true by default, at most 10 hops. */
  followRedirects: boolean;
  /** The statuses that are up, as inclusive ranges (`[[200, 299]]`); null: 2xx. */
  expectStatus: [from: number, to: number][] | null;
}

/**
 * How long each phase of a check took, in ms. null: the phase did not happen on this check (a
 * connection reused from the pool has no DNS, connect or TLS; plain HTTP has no TLS; a TCP check
 * has no first byte).
 */
export interface CheckTiming {
  dnsMs: number | null;
  connectMs: number | null;
  tlsMs: number | null;
  firstByteMs: number | null;
  totalMs: number;
}

/** What `POST /admin/api/resources/test` shows beyond the verdict (asked for with `report: true`). */
export interface CheckReport {
  /** Each condition, in order, with Gatus's message naming the value seen (`[BODY].status (DOWN) == UP`). */
  conditions: { condition: string; ok: boolean; message: string }[];
  /** HTTP: the (final) response; null when none came (or for TCP and DOCKER). */
  response: {
    status: number;
    statusText: string;
    headers: Record<string, string | string[]>;
    /** The first 4 KiB of the decoded body, as text. */
    body: string;
    bodyTruncated: boolean;
  } | null;
}

export interface ProbeResult {
  /** `UNKNOWN` when the check could not decide (registry rate limit): `currentStatus` becomes `unknown`. */
  status: 'AVAILABLE' | 'NOT_AVAILABLE' | 'UNKNOWN';
  /** HTTP: the status line text (`503 Service Unavailable`); errors: the cause. */
  message: string;
  /** null when AVAILABLE; an HTTP status code as text, or a code of src/probes/errors.ts (`CONNECTION_ERROR`, `CONDITION_FAILED`, `DNS_ERROR`, …). */
  errorCode: string | null;
  durationMs: number;
  /** When the check finished, epoch ms. */
  checkedAt: number;
  /** HTTPS, TLS, GRPC over TLS and wss: the peer certificate's notAfter, epoch ms (when a TLS connection was seen). */
  certNotAfter?: number;
  /** The phases of this check (HTTP, TCP and the types that connect); absent for DOCKER, DNS and PING. */
  timing?: CheckTiming;
  /** Only when the probe was asked for one (`probe(input, { report: true })`). */
  report?: CheckReport;
}
