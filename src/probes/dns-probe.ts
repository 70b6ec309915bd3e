import { randomInt } from 'node:crypto';
import { getServers } from 'node:dns';
import dnsPacket, { type DecodedPacket } from 'dns-packet';
import { formatAnswer, parseResolver, questionName } from './dns/answers.ts';
import { tcpExchange } from './dns/exchange.ts';
import { NoAnswer, type Server, show, udpExchange } from './udp-exchange.ts';
import { DNS_ERROR } from './errors.ts';
import { conclude, type Outcome, type ProtocolProbe } from './protocol-probe.ts';
import type { DnsOptions } from './types.ts';

type Reply = DecodedPacket & { rcode?: string };

/** The resolver asked: the option, or the system's first (node:dns reads /etc/resolv.conf at start). */
function resolverOf(options: DnsOptions): Server | undefined {
  const text = options.resolver ?? getServers()[0];
  return text === undefined ? undefined : parseResolver(text);
}

/**
 * DNS checks (docs/API.md#check-types): one question to the resolver over UDP or TCP, with a
 * random id; only an answer with that id and that question counts. A truncated UDP answer (TC) is
 * asked again over TCP within the same timeout, as dig and the stub resolvers do: the record set is
 * there, just too large for a datagram. AVAILABLE when the rcode is NOERROR with a record of the
 * type; an rcode other than NOERROR or no such record is DNS_ERROR; no answer is CONNECTION_ERROR.
 */
export const probeDns: ProtocolProbe<DnsOptions> = async (target, given, ctx) => {
  // The runner passes null when a row or an agent's message carries none: the documented defaults.
  const options: DnsOptions = given ?? { recordType: 'A', resolver: null, transport: 'udp' };
  const started = performance.now();
  const name = questionName(target, options.recordType);
  const server = resolverOf(options);
  if (!server)
    return { status: 'NOT_AVAILABLE', message: 'no resolver: none set and none in /etc/resolv.conf', errorCode: 'CONNECTION_ERROR' };
  const id = randomInt(0, 65_536);
  const query = dnsPacket.encode({
    type: 'query',
    id,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: options.recordType, name }],
  });
  const matches = (reply: Reply) =>
    reply.id === id &&
    reply.questions?.length === 1 &&
    reply.questions[0].type === options.recordType &&
    reply.questions[0].name.toLowerCase() === name.toLowerCase();
  const deadline = started + ctx.timeoutMs;
  const left = () => Math.max(1, deadline - performance.now());
  let reply: Reply | undefined;
  let failure: string | undefined;
  try {
    let transport = options.transport;
    if (transport === 'udp') {
      const { answer: datagram } = await udpExchange(query, server, left(), (msg) => {
        const decoded = decode(msg);
        return decoded !== undefined && matches(decoded);
      });
      reply = decode(datagram)!;
      if (reply.flag_tc) transport = 'tcp';
    }
    if (transport === 'tcp') {
      reply = decode(await tcpExchange(query, server, left()));
      if (!reply) failure = `a malformed answer from ${show(server)}`;
      else if (!matches(reply)) failure = `an answer from ${show(server)} to another question (id or name differ)`;
    }
  } catch (err) {
    failure = err instanceof NoAnswer ? err.message : String(err);
  }
  const responseTimeMs = performance.now() - started;
  const ip = server.host;
  if (failure !== undefined || !reply) {
    const outcome: Outcome = { status: 'NOT_AVAILABLE', message: failure ?? 'no answer', errorCode: 'CONNECTION_ERROR' };
    return conclude(ctx, outcome, { connected: false, responseTimeMs, ip, dnsRcode: null, body: null }, false, 'DNS_RCODE');
  }
  const rcode = reply.rcode ?? 'NOERROR';
  const records = (reply.answers ?? []).filter((a) => a.type === options.recordType).map(formatAnswer);
  const body = records.join('\n');
  let outcome: Outcome;
  if (rcode !== 'NOERROR') outcome = { status: 'NOT_AVAILABLE', message: `${rcode} for ${name}`, errorCode: DNS_ERROR };
  else if (records.length === 0)
    outcome = { status: 'NOT_AVAILABLE', message: `no ${options.recordType} record for ${name}`, errorCode: DNS_ERROR };
  else
    outcome = { status: 'AVAILABLE', message: `${rcode}: ${records.length} ${options.recordType} record(s) for ${name}`, errorCode: null };
  return conclude(ctx, outcome, { connected: true, responseTimeMs, ip, dnsRcode: rcode, body }, true, 'DNS_RCODE');
};

/** A message that does not decode is no answer (a stray datagram is skipped, a TCP one fails the check). */
function decode(msg: Buffer): Reply | undefined {
  try {
    const reply = dnsPacket.decode(msg) as Reply;
    return reply.type === 'response' ? reply : undefined;
  } catch {
    return undefined;
  }
}
