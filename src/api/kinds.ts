/**
 * The enumerations the CLI checks before any request, without TypeBox: the
 * schemas build their enums from these lists, and `cli/` imports them here,
 * so that a cold start of `monctl resources …` never loads the schemas.
 */

/** PUSH: monctl waits for pings instead of checking (docs/API.md#push-checks). */
export const RESOURCE_TYPES = ['HTTP', 'DOCKER', 'TCP', 'PUSH'] as const;

/** What a ping says (docs/API.md#push-checks): an exit code becomes success (0) or fail, with the code. */
export const PING_KINDS = ['success', 'start', 'fail', 'log'] as const;
/** A ping's POST body is kept up to this many bytes; past it the rest is cut and the entry says so (here for `monctl ping`'s cold start). */
export const MAX_PING_BODY_BYTES = 100 * 1024;

/** What alert rules route (docs/API.md#alerts; CERT_RENEWAL_FAILED: an ACME order for the HTTPS edge failed). */
export const ALERT_EVENT_KINDS = [
  'INCIDENT_OPENED',
  'INCIDENT_RESOLVED',
  'CERT_EXPIRING',
  'AGENT_DOWN',
  'AGENT_UP',
  'CERT_RENEWAL_FAILED',
] as const;
