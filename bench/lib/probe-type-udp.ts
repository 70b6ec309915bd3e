/**
 * UDP for `npm run bench:probes -- --type udp`: resource i sends `ping <i>` to one of a few
 * loopback echo servers in a child process. Baseline: a bare dgram loop in a child process, one
 * connected socket per check as the daemon's probe opens, sending the same datagram and waiting
 * for the echo.
 */
import type { ProbeTypeBench } from './probe-type.ts';
import { isEntry, pacedBaseline, roundTrip, runBaselineChild, serveUdp, startChild } from './probe-type-run.ts';

/** Echo servers the resources are spread over. */
const SERVERS = 4;
const payloadOf = (i: number) => `ping ${i}`;

const bench: ProbeTypeBench = {
  type: 'UDP',
  baselineName: 'a bare dgram loop',
  async start() {
    const child = await startChild<number[]>(import.meta.filename, ['--serve']);
    const ports = child.first;
    return {
      resource: (i) => ({ target: `127.0.0.1:${ports[i % ports.length]}`, options: { send: payloadOf(i), sendEncoding: 'text' } }),
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
  if (mode === '--serve') await serveUdp(SERVERS, (msg) => msg);
  else {
    const list = ports.split(',').map(Number);
    await pacedBaseline(Number(perSecond), Number(seconds), (i) => {
      const payload = payloadOf(i % Number(resources));
      return roundTrip(list[i % list.length], payload, (answer) => answer.toString() === payload);
    });
    process.exit(0);
  }
}
