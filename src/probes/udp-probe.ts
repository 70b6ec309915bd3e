import type { ProtocolProbe } from './protocol-probe.ts';
import type { UdpOptions } from './types.ts';

/** UDP checks (docs/API.md#check-types): built by the UDP work, not yet on main. */
export const probeUdp: ProtocolProbe<UdpOptions> = async () => ({
  status: 'NOT_AVAILABLE',
  message: 'UDP checks are not built yet',
  errorCode: 'CONNECTION_ERROR',
});
