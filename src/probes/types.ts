/**
 * The probe interface: one check of one target, nothing written. The
 * scheduler and `POST /api/resources/{id}/check` both call `probe()` and hand
 * the result to the result writer (daemon/probes/results.ts).
 */
export type ResourceType = 'HTTP' | 'TCP' | 'DOCKER';

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
  /** null when AVAILABLE; an HTTP status code as text, `CONNECTION_ERROR`, `CONDITION_FAILED` or `DOCKER_ERROR`. */
  errorCode: string | null;
  durationMs: number;
  /** When the check finished, epoch ms. */
  checkedAt: number;
  /** HTTPS checks: the peer certificate's notAfter, epoch ms (when a TLS connection was seen). */
  certNotAfter?: number;
  /** The phases of this check (HTTP and TCP); absent for DOCKER. */
  timing?: CheckTiming;
  /** Only when the probe was asked for one (`probe(input, { report: true })`). */
  report?: CheckReport;
}
