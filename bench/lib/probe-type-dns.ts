/**
 * DNS for `npm run bench:probes -- --type dns`: resource i asks `r<i>.bench.test` A of one of a
 * few loopback resolvers, tiny dns-packet servers in a child process answering 192.0.2.1 to every
 * question (dnsmasq would do, but it cannot tell how many it answered).
 *
 * Baseline: a bare dns-packet + dgram loop, one socket per question, in a child process. It does
 * what the daemon's probe does (encode, a fresh source port per question as stub resolvers do
 * against spoofing, decode) and nothing else, so the ratio is the daemon's own cost: scheduling,
 * the result writer, the conditions. node:dns's Resolver would measure c-ares instead, another
 * implementation with another cost, not the daemon's overhead.
 */
import { randomInt } from 'node:crypto';
import dnsPacket from 'dns-packet';
import type { ProbeTypeBench } from './probe-type.ts';
import { isEntry, pacedBaseline, roundTrip, runBaselineChild, serveUdp, startChild } from './probe-type-run.ts';

/** Resolvers the resources are spread over. */
const SERVERS = 4;
const nameOf = (i: number) => `r${i}.bench.test`;

/** A resolver's answer: 192.0.2.1 to an A question, no record to others; null to what does not decode. */
function answer(msg: Buffer): Buffer | null {
  let query: dnsPacket.DecodedPacket;
  try {
    query = dnsPacket.decode(msg);
  } catch {
    return null;
  }
  const question = query.questions?.[0];
  if (!question) return null;
  return dnsPacket.encode({
    type: 'response',
    id: query.id,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    questions: [question],
    answers: question.type === 'A' ? [{ type: 'A', name: question.name, ttl: 60, data: '192.0.2.1' }] : [],
  });
}

/** One bare question, as the baseline asks it: encoded, sent, the answer decoded and its id checked. */
function ask(port: number, name: string): Promise<boolean> {
  const id = randomInt(0, 65_536);
  const query = dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name }] });
  return roundTrip(port, query, (msg) => {
    const reply = dnsPacket.decode(msg) as dnsPacket.DecodedPacket & { rcode?: string };
    return reply.id === id && reply.rcode === 'NOERROR' && (reply.answers?.length ?? 0) > 0;
  });
}

const bench: ProbeTypeBench = {
  type: 'DNS',
  baselineName: 'a bare dns-packet + dgram loop',
  async start() {
    const child = await startChild<number[]>(import.meta.filename, ['--serve']);
    const ports = child.first;
    return {
      resource: (i) => ({
        target: nameOf(i),
        options: { recordType: 'A', resolver: `127.0.0.1:${ports[i % ports.length]}`, transport: 'udp' },
      }),
      answered: () => child.request<number>('answered'),
      stop: () => child.stop(),
    };
  },
  baseline(targets, resources, perSecond, seconds) {
    const ports = [
      ...new Set(
        Array.from(
          { length: Math.min(resources, SERVERS) },
          (_, i) => (targets.resource(i).options as { resolver: string }).resolver.split(':')[1],
        ),
      ),
    ];
    return runBaselineChild(import.meta.filename, ['--baseline', String(resources), String(perSecond), String(seconds), ports.join(',')]);
  },
};
export default bench;

if (isEntry(import.meta.filename)) {
  const [mode, resources, perSecond, seconds, ports] = process.argv.slice(2);
  if (mode === '--serve') await serveUdp(SERVERS, answer);
  else {
    const list = ports.split(',').map(Number);
    await pacedBaseline(Number(perSecond), Number(seconds), (i) => ask(list[i % list.length], nameOf(i % Number(resources))));
    process.exit(0);
  }
}
