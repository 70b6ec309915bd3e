/**
 * The two messages of `grpc.health.v1.Health/Check`, encoded and decoded by hand. Each is one
 * field (`string service = 1`, `ServingStatus status = 1`): a few lines of protobuf wire format,
 * where loading health.proto at run time would pull in protobufjs and @grpc/proto-loader and parse
 * a schema for two fields (docs/DECISIONS.md#grpc-websocket-and-ssh-checks).
 */

/** The method path of the standard health service. */
export const HEALTH_CHECK_PATH = '/grpc.health.v1.Health/Check';

/** `HealthCheckResponse.ServingStatus`, by number. */
export const SERVING_STATUSES = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'] as const;

/** `HealthCheckRequest{service}`: field 1, wire type 2 (length-delimited); proto3 omits the empty string. */
export function encodeHealthRequest(service: string): Buffer {
  if (service === '') return Buffer.alloc(0);
  const name = Buffer.from(service, 'utf8');
  return Buffer.concat([Buffer.from([0x0a]), varint(name.length), name]);
}

/**
 * The status of a `HealthCheckResponse`: field 1 as a varint, UNKNOWN when absent (proto3's
 * default); other fields are skipped as the wire format says. A number past the enum's known
 * values is named by its number. Throws on bytes that are not a message.
 */
export function decodeHealthResponse(bytes: Buffer): string {
  let status = 0;
  let at = 0;
  const read = (): number => {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (at >= bytes.length) throw new Error('truncated varint');
      const b = bytes[at++];
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return value;
    }
    throw new Error('varint too long');
  };
  while (at < bytes.length) {
    const key = read();
    const wire = key & 7;
    if (wire === 0) {
      const value = read();
      if (key >>> 3 === 1) status = value;
    } else if (wire === 1) at += 8;
    else if (wire === 2) {
      const length = read();
      at += length;
    } else if (wire === 5) at += 4;
    else throw new Error(`unsupported wire type ${wire}`);
    if (at > bytes.length) throw new Error('truncated field');
  }
  return SERVING_STATUSES[status] ?? String(status);
}

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}
