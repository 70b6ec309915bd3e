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
}
