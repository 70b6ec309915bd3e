/**
 * GRPC for `npm run bench:probes -- --type grpc`: resource i asks `grpc.health.v1.Health/Check`
 * for service `bench.S<i>` of one of a few loopback grpc-js servers with the standard health
 * service (grpc-health-check), in a child process, plaintext.
 *
 * Baseline: a bare grpc-js client loop in a child process: one channel per server, kept, as the
 * daemon keeps one per target, and the same unary health calls (the same hand-made messages and
 * deadline), so that the ratio is the daemon's own cost: scheduling, the result writer, the
 * conditions, not grpc-js's.
 */
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { decodeHealthResponse, encodeHealthRequest, HEALTH_CHECK_PATH } from '../../src/probes/grpc-health.ts';
import type { ProbeTypeBench } from './probe-type.ts';
import { isEntry, pacedBaseline, runBaselineChild, startChild } from './probe-type-run.ts';

/** Servers the resources are spread over. */
const SERVERS = 4;
const serviceOf = (i: number) => `bench.S${i}`;

/** In the target child: the servers, every service SERVING; counts the checks answered through a server interceptor. */
async function serve(resources: number): Promise<void> {
  const statuses = Object.fromEntries(Array.from({ length: resources }, (_, i) => [serviceOf(i), 'SERVING' as const]));
  const health = new HealthImplementation(statuses);
  let answered = 0;
  const counting: grpc.ServerInterceptor = (_method, call) =>
    new grpc.ServerInterceptingCall(call, {
      sendStatus: (status, next) => {
        if (status.code === grpc.status.OK) answered++;
        next(status);
      },
    });
  const ports: number[] = [];
  for (let s = 0; s < SERVERS; s++) {
    const server = new grpc.Server({ interceptors: [counting] });
    health.addToServer(server);
    ports.push(
      await new Promise<number>((resolve, reject) =>
        server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
      ),
    );
  }
  process.on('message', () => process.send!(answered));
  process.send!(ports);
}

/** In the baseline child: the same calls, paced, over one kept channel per server. */
async function baseline(resources: number, perSecond: number, seconds: number, ports: number[]): Promise<void> {
  const clients = ports.map((p) => new grpc.Client(`127.0.0.1:${p}`, grpc.credentials.createInsecure()));
  const check = (i: number) =>
    new Promise<boolean>((resolve) => {
      const client = clients[i % clients.length];
      const args = [HEALTH_CHECK_PATH, encodeHealthRequest, decodeHealthResponse, serviceOf(i % resources)] as const;
      client.makeUnaryRequest(...args, new grpc.Metadata(), { deadline: Date.now() + 15_000 }, (err, status) =>
        resolve(!err && status === 'SERVING'),
      );
    });
  await pacedBaseline(perSecond, seconds, check);
  for (const c of clients) c.close();
}

const bench: ProbeTypeBench = {
  type: 'GRPC',
  baselineName: 'a bare grpc-js client loop',
  async start(resources) {
    const child = await startChild<number[]>(import.meta.filename, ['--serve', String(resources)]);
    const ports = child.first;
    return {
      resource: (i) => ({ target: `127.0.0.1:${ports[i % ports.length]}`, options: { service: serviceOf(i), tls: false } }),
      answered: () => child.request<number>('answered'),
      stop: () => child.stop(),
    };
  },
  baseline(targets, resources, perSecond, seconds) {
    const ports = Array.from({ length: Math.min(resources, SERVERS) }, (_, i) => targets.resource(i).target.split(':')[1]);
    return runBaselineChild(import.meta.filename, ['--baseline', String(resources), String(perSecond), String(seconds), ports.join(',')]);
  },
};
export default bench;

if (isEntry(import.meta.filename)) {
  const [mode, resources, perSecond, seconds, ports] = process.argv.slice(2);
  if (mode === '--serve') await serve(Number(resources));
  else {
    await baseline(Number(resources), Number(perSecond), Number(seconds), ports.split(',').map(Number));
    process.exit(0);
  }
}
