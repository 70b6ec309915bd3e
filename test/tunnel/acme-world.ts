import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { operations } from '../../src/api/operations.ts';
import type { Certificate } from '../../src/api/schemas/certificates.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { type Pebble, startPebble } from '../helpers/pebble.ts';
import { freePort } from '../helpers/free-port.ts';
import { agentSlot } from '../helpers/tls.ts';
import { startAgent, type TestAgent, until } from './helpers.ts';

/**
 * A daemon with the HTTPS edge and ACME against its own pebble, an agent
 * connected to it, and a data dir that outlives a restart. The edges listen
 * on ports chosen before pebble starts, since pebble's validator is told
 * them once (`httpPort`, `tlsPort`).
 */
export interface AcmeWorld {
  pebble: Pebble;
  d: TestDaemon;
  httpPort: number;
  tlsPort: number;
  agentId: number;
  /** (Re)starts the daemon on the same data dir and ports, with these extra flags. */
  restart(args?: string[]): Promise<TestDaemon>;
  /** The ACME row of a name once it has left PENDING (or `state`). */
  certificateOf(name: string, accept?: (c: Certificate) => boolean): Promise<Certificate>;
  close(): Promise<void>;
}

export async function startAcmeWorld(opts: {
  challenges: string;
  pebbleEnv?: Record<string, string>;
  pebbleHttpPort?: number;
  /** The DNS server pebble resolves through (DNS-01), `host:port`. */
  pebbleDns?: string;
  args?: string[];
}): Promise<AcmeWorld> {
  const [httpPort, tlsPort] = [await freePort(), await freePort()];
  const pebble = await startPebble({ httpPort: opts.pebbleHttpPort ?? httpPort, tlsPort, env: opts.pebbleEnv, dnsServer: opts.pebbleDns });
  const base = mkdtempSync(join(tmpdir(), 'monctl-acme-'));
  const dataDir = join(base, 'data');
  const daemonArgs = (extra: string[]) => [
    '--edge-listen',
    `127.0.0.1:${httpPort}`,
    '--edge-tls-listen',
    `127.0.0.1:${tlsPort}`,
    '--acme-directory',
    pebble.directory,
    '--acme-email',
    'ops@example.test',
    '--acme-challenges',
    opts.challenges,
    ...(opts.args ?? []),
    ...extra,
  ];
  // The daemon trusts pebble's own HTTPS listener the way an operator would trust a private ACME server.
  const start = (extra: string[] = []) =>
    startDaemon({ dataDir, args: daemonArgs(extra), env: { NODE_EXTRA_CA_CERTS: pebble.listenerCaFile } });
  let d: TestDaemon;
  try {
    d = await start();
  } catch (err) {
    await pebble.stop();
    rmSync(base, { recursive: true, force: true });
    throw err;
  }
  const slot = await agentSlot(d, 'office', base);
  let agent: TestAgent = startAgent(d.url, slot.tokenFile);
  const connected = async () =>
    until(async () => (await world.d.admin.call(operations.getAgent, { params: { id: slot.id } })).status === 'CONNECTED');
  const world: AcmeWorld = {
    pebble,
    d,
    httpPort,
    tlsPort,
    agentId: slot.id,
    async restart(args = []) {
      await agent.stop('SIGKILL');
      await world.d.stop();
      world.d = await start(args);
      agent = startAgent(world.d.url, slot.tokenFile);
      await connected();
      return world.d;
    },
    certificateOf: (name, accept = (c) => c.state !== 'PENDING') =>
      until(async () => {
        const found = (await world.d.admin.call(operations.listCertificates)).find(
          (c) => c.source === 'ACME' && c.hostnames.includes(name),
        );
        return found && accept(found) ? found : undefined;
      }, 100),
    async close() {
      await agent.stop('SIGKILL');
      await world.d.stop();
      await pebble.stop();
      rmSync(base, { recursive: true, force: true });
    },
  };
  await connected();
  return world;
}
