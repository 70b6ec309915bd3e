/**
 * The conditions language (docs/DECISIONS.md#probe-conditions): Gatus's syntax, one comparison per
 * condition, parsed once per resource into these nodes and evaluated on every check.
 */

/** Longest condition accepted, in characters: parsing and evaluation stay bounded per check. */
export const MAX_CONDITION_LENGTH = 1024;
/** Most conditions on one resource. */
export const MAX_CONDITIONS = 32;
/** Most steps in one JSON path (`[BODY].a.b[0]` has three). */
export const MAX_PATH_STEPS = 32;
/** Longest `regex()` pattern, in characters. */
export const MAX_REGEX_LENGTH = 256;
/** Longest value quoted in a message; a 1 MiB body is cut here. */
export const MAX_SHOWN = 200;

export const OPERATORS = ['==', '!=', '<=', '>=', '>', '<'] as const;
export type Operator = (typeof OPERATORS)[number];

/** The placeholders monctl resolves, by their bracketed name. */
export const PLACEHOLDERS = [
  'STATUS',
  'RESPONSE_TIME',
  'BODY',
  'HEADER',
  'CERTIFICATE_EXPIRATION',
  'IP',
  'CONNECTED',
  'DNS_RCODE',
  'PACKET_LOSS',
  'TLS_VERSION',
  'TLS_CIPHER',
] as const;
export type PlaceholderName = (typeof PLACEHOLDERS)[number];

/** One step of a JSON path: an object key or an array index. */
export type PathStep = string | number;

export interface PlaceholderOperand {
  kind: 'placeholder';
  name: PlaceholderName;
  /** `len()` or `has()` around the placeholder. */
  fn: 'len' | 'has' | null;
  /** `[BODY]` only: the JSON path after it; null for the whole body. */
  path: PathStep[] | null;
  /** `[HEADER]` only: the header name, lower-cased. */
  header: string | null;
  /** 1-based column of the placeholder's `[` in the condition. */
  column: number;
}

export type Operand =
  | { kind: 'literal'; value: string }
  | PlaceholderOperand
  | { kind: 'pat'; match: (s: string) => boolean }
  | { kind: 'any'; options: string[] }
  | { kind: 'regex'; re: RegExp };

export interface Condition {
  /** The condition as written. */
  source: string;
  operator: Operator;
  /** Each side as written, trimmed: what the message shows. */
  texts: [string, string];
  operands: [Operand, Operand];
}

/** A condition that cannot be parsed; `column` is 1-based in the condition's text. */
export class ConditionSyntaxError extends Error {
  column: number;
  constructor(message: string, column: number) {
    super(message);
    this.name = 'ConditionSyntaxError';
    this.column = column;
  }
}

/** What one check saw, for conditions to read. */
export interface Observation {
  /** HTTP status code; null or absent when no response (Gatus: 0). */
  status?: number | null;
  responseTimeMs: number;
  /** The response body as text, read only when `needsBody` says so. */
  body?: string | null;
  /** The body went past the size cap: what was read is incomplete. */
  bodyTruncated?: boolean;
  /** Response headers as Node gives them (lower-case names). */
  headers?: Record<string, string | string[] | undefined> | null;
  /** Time left until the peer certificate's notAfter, ms (negative when expired); null when no TLS. */
  certificateExpiresInMs?: number | null;
  ip?: string | null;
  connected: boolean;
  /** DNS: the answer's rcode by name (`NOERROR`, `NXDOMAIN`, `SERVFAIL`, …); null or absent when none came. */
  dnsRcode?: string | null;
  /** PING: the share of echoes lost, in percent (0 to 100). */
  packetLoss?: number | null;
  /** TLS: the protocol and cipher the handshake agreed (`TLSv1.3`, `TLS_AES_256_GCM_SHA384`); null when none. */
  tlsVersion?: string | null;
  tlsCipher?: string | null;
}

export interface ConditionOutcome {
  ok: boolean;
  /** Gatus's display: each resolved side in parentheses, `[BODY].status (DOWN) == UP`. */
  message: string;
}
