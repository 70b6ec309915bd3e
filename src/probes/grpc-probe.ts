/**
 * GRPC checks (docs/API.md#check-types): `grpc.health.v1.Health/Check` over a channel per target,
 * kept between checks as the HTTP pools are, so that a check is one HTTP/2 stream and not a new
 * connection and handshake (docs/DECISIONS.md#grpc-websocket-and-ssh-checks).
 */
import type { ChannelCredentials, Client, ServiceError } from '@grpc/grpc-js';
import { createSecureContext, getCACertificates } from 'node:tls';
import { LruMap } from '../lru-map.ts';
import { describeError, GRPC_ERROR } from './errors.ts';
import { decodeHealthResponse, encodeHealthRequest, HEALTH_CHECK_PATH } from './grpc-health.ts';
import { conclude, type Outcome, type ProtocolProbe, type ProtocolProbeContext } from './protocol-probe.ts';
import { parseTcpTarget } from './tcp-probe.ts';
import { tlsFailure } from './tls-failure.ts';
import type { GrpcOptions } from './types.ts';

type GrpcJs = typeof import('@grpc/grpc-js');

let loading: Promise<GrpcJs> | undefined;

/**
 * grpc-js (with HTTP/2, its resolvers and load balancers: about 2 MB of code) is imported with
 * the first GRPC check, never at start-up: the CLI and a daemon without GRPC resources do not
 * load it.
 */
function loadGrpc(): Promise<GrpcJs> {
  loading ??= import('@grpc/grpc-js').then((m) => (m as GrpcJs & { default?: GrpcJs }).default ?? m);
  return loading;
}

/**
 * Channels kept at once. Each holds one HTTP/2 connection (a file descriptor) to its target;
 * past this the least recently checked target's channel is closed.
 */
export const MAX_GRPC_CHANNELS = 1024;

/** A health answer is two bytes; anything much larger is not one. */
const MAX_RESPONSE_BYTES = 4096;

const CHANNEL_OPTIONS = {
  'grpc.max_receive_message_length': MAX_RESPONSE_BYTES,
  'grpc.max_send_message_length': MAX_RESPONSE_BYTES,
  // A check is one attempt: a retry would hide the failure it is there to see.
  'grpc.enable_retries': 0,
  // No DNS TXT lookup for a service config per target.
  'grpc.service_config_disable_resolution': 1,
  // The channel owns its connection, so closing it (eviction, a failed check) closes the socket.
  'grpc.use_local_subchannel_pool': 1,
};

/** The GRPC checks of one runner: its channels, and the probe that uses them. */
export interface GrpcProber {
  probe: ProtocolProbe<GrpcOptions>;
  /** Closes every channel (the runner's close()). */
  close(): Promise<void>;
}

export function createGrpcProber(maxChannels = MAX_GRPC_CHANNELS): GrpcProber {
  const channels = new LruMap<string, Client>(maxChannels, (client) => client.close());
  const probe: ProtocolProbe<GrpcOptions> = async (target, options, ctx) => {
    const address = parseTcpTarget(target);
    if (!address) return { status: 'NOT_AVAILABLE', message: `invalid GRPC target "${target}"`, errorCode: 'CONNECTION_ERROR' };
    const grpc = await loadGrpc();
    const key = `${options.tls ? (ctx.skipTLS ? 'tls-unverified' : 'tls') : 'plain'} ${target}`;
    const client = channels.getOrSet(key, () => new grpc.Client(target, credentials(grpc, options.tls, ctx.skipTLS), CHANNEL_OPTIONS));
    const answer = await healthCheck(grpc, client, options, ctx.timeoutMs);
    if (!answer.reached) {
      // A channel that failed to connect keeps retrying in the background with a growing backoff:
      // drop it, so that nothing runs between checks and the next check connects afresh.
      channels.delete(key);
      client.close();
    }
    return verdict(answer, ctx, target);
  };
  return {
    probe,
    async close() {
      for (const client of channels.values()) client.close();
      channels.clear();
    },
  };
}

/**
 * TLS trusts what the HTTP checks trust: Node's current default CAs, NODE_EXTRA_CA_CERTS and any
 * set with tls.setDefaultCACertificates (`--ca-file`) included. grpc-js's own createSsl builds a
 * context that does not see the latter (a test CA set so was refused).
 */
function credentials(grpc: GrpcJs, tls: boolean, skipTLS: boolean): ChannelCredentials {
  if (!tls) return grpc.credentials.createInsecure();
  const context = createSecureContext({ ca: getCACertificates('default') });
  return grpc.credentials.createFromSecureContext(context, skipTLS ? { rejectUnauthorized: false } : undefined);
}

interface HealthAnswer {
  /** A gRPC answer came (a health status, or a status the server sent). */
  reached: boolean;
  /** The health status (`SERVING`), or the name of the status code the call ended with. */
  body: string | null;
  error: ServiceError | null;
  /** The call ended with this gRPC status code's name (not OK). */
  code: string | null;
  responseTimeMs: number;
  certNotAfter: number | undefined;
}

function healthCheck(grpc: GrpcJs, client: Client, options: GrpcOptions, timeoutMs: number): Promise<HealthAnswer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const call = client.makeUnaryRequest(
      HEALTH_CHECK_PATH,
      encodeHealthRequest,
      decodeHealthResponse,
      options.service,
      new grpc.Metadata(),
      { deadline: Date.now() + timeoutMs },
      (err, status) => {
        const responseTimeMs = performance.now() - started;
        const peer = call.getAuthContext()?.sslPeerCertificate;
        const certNotAfter = peer?.valid_to ? Date.parse(peer.valid_to) : undefined;
        if (!err) return resolve({ reached: true, body: status ?? 'UNKNOWN', error: null, code: null, responseTimeMs, certNotAfter });
        const code = grpc.status[err.code] ?? String(err.code);
        // UNAVAILABLE or DEADLINE_EXCEEDED on a channel that never got ready: no server was reached.
        const ready = client.getChannel().getConnectivityState(false) === grpc.connectivityState.READY;
        const reached = ready || (err.code !== grpc.status.UNAVAILABLE && err.code !== grpc.status.DEADLINE_EXCEEDED);
        resolve({ reached, body: reached ? code : null, error: err, code, responseTimeMs, certNotAfter });
      },
    );
  });
}

function verdict(answer: HealthAnswer, ctx: ProtocolProbeContext, target: string): Outcome {
  const { error, code, body } = answer;
  let outcome: Outcome;
  if (!answer.reached) {
    const tls = tlsFailure(error?.details);
    const cause = code === 'DEADLINE_EXCEEDED' ? `timeout after ${ctx.timeoutMs} ms` : describeError({ message: error?.details });
    outcome = { status: 'NOT_AVAILABLE', message: tls ? `TLS error: ${tls}` : cause, errorCode: tls ? 'TLS_ERROR' : 'CONNECTION_ERROR' };
  } else if (error) {
    outcome = { status: 'NOT_AVAILABLE', message: callFailure(code ?? '', error.details), errorCode: GRPC_ERROR };
  } else if (body === 'SERVING') {
    outcome = { status: 'AVAILABLE', message: `SERVING (${target})`, errorCode: null };
  } else {
    outcome = { status: 'NOT_AVAILABLE', message: body ?? 'UNKNOWN', errorCode: GRPC_ERROR };
  }
  if (answer.certNotAfter !== undefined) outcome.certNotAfter = answer.certNotAfter;
  const observation = {
    connected: answer.reached,
    responseTimeMs: answer.responseTimeMs,
    body,
    certificateExpiresInMs: answer.certNotAfter === undefined ? null : answer.certNotAfter - Date.now(),
  };
  return conclude(ctx, outcome, observation, answer.reached, 'BODY');
}

/** The call's own status, said in the health protocol's terms where it has them. */
function callFailure(code: string, details: string): string {
  if (code === 'UNIMPLEMENTED') return `UNIMPLEMENTED: the server has no health service (${details})`;
  if (code === 'NOT_FOUND') return `NOT_FOUND: the health service does not know this service (${details})`;
  return `${code}: ${details}`;
}
