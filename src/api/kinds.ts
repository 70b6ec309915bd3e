/**
 * The enumerations the CLI checks before any request, without TypeBox: the
 * schemas build their enums from these lists, and `cli/` imports them here,
 * so that a cold start of `monctl resources …` never loads the schemas.
 */

/**
 * PUSH: monctl waits for pings instead of checking (docs/API.md#push-checks). DNS to SSH: the
 * protocol checks (docs/API.md#check-types); the seed's three keep their meaning.
 */
export const RESOURCE_TYPES = ['HTTP', 'DOCKER', 'TCP', 'PUSH', 'DNS', 'PING', 'TLS', 'UDP', 'GRPC', 'WEBSOCKET', 'SSH'] as const;

/** DNS checks: the record types asked for (docs/API.md#check-types). */
export const DNS_RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'NS', 'SOA', 'SRV', 'CAA', 'PTR'] as const;
/** DNS checks: how the question goes to the resolver. */
export const DNS_TRANSPORTS = ['udp', 'tcp'] as const;
/** PING checks: the address family of the echoes (`auto`: what the name resolves to first). */
export const IP_FAMILIES = ['auto', 'ipv4', 'ipv6'] as const;
/** TLS checks: the plain-text protocols whose STARTTLS (or SSLRequest) comes before the handshake. */
export const STARTTLS_PROTOCOLS = ['smtp', 'imap', 'pop3', 'ftp', 'postgres', 'ldap'] as const;
/** TLS checks: the lowest protocol version accepted. */
export const TLS_VERSIONS = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const;
/** TCP and UDP payloads: how `send` is written. */
export const PAYLOAD_ENCODINGS = ['text', 'hex'] as const;
/** TCP `expect`: the first bytes as text or hex, or a regular expression on them. */
export const EXPECT_KINDS = ['text', 'hex', 'regex'] as const;

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
