import type { ProtocolProbe } from './protocol-probe.ts';
import type { GrpcOptions } from './types.ts';

/** GRPC checks (docs/API.md#check-types): built by the GRPC work, not yet on main. */
export const probeGrpc: ProtocolProbe<GrpcOptions> = async () => ({
  status: 'NOT_AVAILABLE',
  message: 'GRPC checks are not built yet',
  errorCode: 'CONNECTION_ERROR',
});
