import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import pino from 'pino';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProbeServer } from '../../cli/agent/probes.ts';
import { DAEMON_LOCATION } from '../../daemon/probes/locations.ts';
import { checkAt, type RoundDeps } from '../../daemon/probes/rounds.ts';
import { nothingConnected } from '../../daemon/tunnel-control.ts';
import type { ProbeInput, TlsOptions } from '../../src/probes/types.ts';
import { PROBE_PROTOCOL } from '../../src/tunnel/probe-protocol.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';
import { agentSide, daemonSide } from '../locations/probe-pair.ts';
import { closeAll, muxPair } from '../tunnel/mux-helpers.ts';
import { openContext, type TestContext } from './helpers/context.ts';
import { selfSigned, type Target, tlsDefaults, tlsServer } from './helpers/tls-targets.ts';

/**
 * TLS checks at an agent location, over a real loopback mux session: the same verdict, message,
 * error code and certificate expiry as the daemon's own check of the same input, for a trusted
 * certificate, a self-signed one (and with skipTLS), STARTTLS to a real SMTP server, and
 * conditions on the handshake.
 */
const log = pino({ level: 'silent' });
let tc: TestContext;
let pki: TestPki;
let good: Target;
let self: Target;
let smtp: SMTPServer;
let smtpPort = 0;

beforeAll(async () => {
  tc = await openContext();
  pki = makePki('monctl tls agent CA');
  setDefaultCACertificates([...getCACertificates('default'), pki.ca]);
  const cert = pki.issue('agent', 1, 2);
  good = await tlsServer({ cert: cert.cert, key: cert.key });
  self = await tlsServer(selfSigned(pki));
  smtp = new SMTPServer({ key: cert.key, cert: cert.cert, logger: false, authOptional: true });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
  smtpPort = (smtp.server.address() as { port: number }).port;
});
afterAll(async () => {
  await closeAll();
  await Promise.all([good?.close(), self?.close()]);
  await new Promise<void>((r) => (smtp ? smtp.close(() => r()) : r()));
  await tc?.close();
  pki?.cleanup();
});

const input = (port: number, o: Partial<TlsOptions> = {}, extra: Partial<ProbeInput> = {}): ProbeInput => ({
  resourceId: 7,
  type: 'TLS',
  target: `127.0.0.1:${port}`,
  skipTLS: false,
  recursive: false,
  timeoutMs: 3_000,
  options: tlsDefaults(o),
  ...extra,
});

describe('TLS checks at an agent', () => {
  it('each case gives the same verdict, message and certNotAfter at the agent as at the daemon', async () => {
    const pair = await muxPair();
    const server = new ProbeServer({ concurrency: 4, protocol: PROBE_PROTOCOL, log });
    agentSide(pair, server, log);
    const probes = daemonSide(tc.ctx, pair, server.support());
    const ctx: RoundDeps = { ...tc.ctx, tunnel: { ...nothingConnected, probeAgent: (id, name, c) => probes.probe(id, name, c) } };
    const office = { agentId: 1, name: 'office' };
    const cases: Array<[ProbeInput, string, string | null]> = [
      [input(good.port), 'AVAILABLE', null],
      [input(self.port), 'NOT_AVAILABLE', 'TLS_ERROR'],
      [input(self.port, {}, { skipTLS: true }), 'AVAILABLE', null],
      [input(smtpPort, { starttls: 'smtp' }), 'AVAILABLE', null],
      [input(smtpPort, { starttls: 'smtp', sni: 'other.monctl.test' }), 'NOT_AVAILABLE', 'TLS_ERROR'],
      [input(good.port, {}, { conditions: ['[TLS_VERSION] == TLSv1.2'] }), 'NOT_AVAILABLE', 'CONDITION_FAILED'],
    ];
    try {
      for (const [check, status, errorCode] of cases) {
        const here = await checkAt(ctx, tc.ctx.prober, check, DAEMON_LOCATION);
        const there = await checkAt(ctx, tc.ctx.prober, check, office);
        expect(there.ran, check.target).toBe(true);
        const verdict = ({ result }: typeof here) => ({
          status: result.status,
          message: result.message,
          errorCode: result.errorCode,
          certNotAfter: result.certNotAfter,
        });
        expect(verdict(here)).toMatchObject({ status, errorCode });
        expect(here.result.certNotAfter).toBeTypeOf('number');
        expect(verdict(there)).toEqual(verdict(here));
      }
    } finally {
      probes.close();
      await server.close();
    }
  });
});
