import { randomInt } from 'node:crypto';
import dnsPacket, { type Answer, type DecodedPacket } from 'dns-packet';
import type { AcmeDnsUpdate } from '../../../config/values.ts';
import { sign, verify } from './tsig.ts';
import { exchange } from './transport.ts';
import { updateMessage } from './wire.ts';

/** How long an added record may take to show on the server (a primary answers at once; a hidden one may lag). */
const VISIBLE_MS = 60_000;
const POLL_MS = 250;
const NXDOMAIN = 3;

/**
 * ACME DNS-01 records through RFC 2136 dynamic updates signed with TSIG, at
 * one server that is authoritative for the zones (BIND, Knot, PowerDNS…): the
 * interface lego and Caddy call "rfc2136". The zone of a name is found by an
 * SOA query at that server, as they do.
 */
export class DnsUpdater {
  readonly #config: AcmeDnsUpdate;

  constructor(config: AcmeDnsUpdate) {
    this.#config = config;
  }

  async #query(name: string, type: 'SOA' | 'TXT'): Promise<DecodedPacket> {
    const id = randomInt(0, 65536);
    const message = dnsPacket.encode({ type: 'query', id, flags: 0, questions: [{ name, type, class: 'IN' }] });
    const answer = dnsPacket.decode(await exchange(this.#config.server, message));
    if (answer.id !== id) throw new Error('the DNS server answered another query');
    return answer;
  }

  /** The zone holding `name`: the owner of the SOA the server answers with (in its answer or authority section). */
  async zoneOf(name: string): Promise<string> {
    let candidate = name;
    // A server that is not authoritative for the name refuses it: try each parent, the name's labels bound the walk.
    for (;;) {
      const answer = await this.#query(candidate, 'SOA');
      const soa = [...(answer.answers ?? []), ...(answer.authorities ?? [])].find((r) => r.type === 'SOA');
      const rcode = (answer.flags ?? 0) & 0xf;
      if (soa && (rcode === 0 || rcode === NXDOMAIN)) return soa.name.toLowerCase().replace(/\.$/, '');
      const dot = candidate.indexOf('.');
      if (dot < 0) throw new Error(`the DNS server ${this.#where()} is authoritative for no zone holding ${name}`);
      candidate = candidate.slice(dot + 1);
    }
  }

  /** Adds the TXT record `value` at `name` (beside any others) and waits until the server answers it. */
  async add(name: string, value: string): Promise<void> {
    await this.#update(name, value, 'add');
    const deadline = Date.now() + VISIBLE_MS;
    while (!(await this.#has(name, value))) {
      if (Date.now() > deadline)
        throw new Error(`the DNS server ${this.#where()} accepted the TXT record of ${name} but does not answer it`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  /** Deletes that one TXT record (another order's record at the same name stays). */
  async remove(name: string, value: string): Promise<void> {
    await this.#update(name, value, 'delete');
  }

  /** Whether the server answers the TXT record `value` at `name`. */
  async #has(name: string, value: string): Promise<boolean> {
    const answer = await this.#query(name, 'TXT');
    return (answer.answers ?? []).some((r: Answer) => r.type === 'TXT' && txtOf(r) === value);
  }

  async #update(name: string, value: string, op: 'add' | 'delete'): Promise<void> {
    const zone = await this.zoneOf(name);
    const { signed, mac } = sign(updateMessage(randomInt(0, 65536), zone, name, value, op), this.#config);
    try {
      verify(await exchange(this.#config.server, signed), mac, this.#config);
    } catch (err) {
      throw new Error(`RFC 2136 update (${op} TXT ${name} in zone ${zone}) at ${this.#where()}: ${(err as Error).message}`);
    }
  }

  #where(): string {
    const { host, port } = this.#config.server;
    return `${host.includes(':') ? `[${host}]` : host}:${port}`;
  }
}

/** A TXT record's strings joined (an ACME digest is one string). */
function txtOf(r: Answer): string {
  const data = (r as { data: Buffer | Buffer[] | string }).data;
  return (Array.isArray(data) ? data : [data]).map((d) => d.toString()).join('');
}
