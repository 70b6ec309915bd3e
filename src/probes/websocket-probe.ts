import type { ProtocolProbe } from './protocol-probe.ts';
import type { WebSocketOptions } from './types.ts';

/** WEBSOCKET checks (docs/API.md#check-types): built by the WEBSOCKET work, not yet on main. */
export const probeWebSocket: ProtocolProbe<WebSocketOptions> = async () => ({
  status: 'NOT_AVAILABLE',
  message: 'WEBSOCKET checks are not built yet',
  errorCode: 'CONNECTION_ERROR',
});
