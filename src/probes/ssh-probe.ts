import type { ProtocolProbe } from './protocol-probe.ts';

/** SSH checks (docs/API.md#check-types): built by the SSH work, not yet on main. */
export const probeSsh: ProtocolProbe<null> = async () => ({
  status: 'NOT_AVAILABLE',
  message: 'SSH checks are not built yet',
  errorCode: 'CONNECTION_ERROR',
});
