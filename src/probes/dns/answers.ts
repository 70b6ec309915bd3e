/**
 * What a DNS check shows of an answer: each record of the asked type as `dig +short` prints it,
 * one per line, so that `[BODY] == 192.0.2.1` reads as a user typing dig would expect.
 */
import { isIP, isIPv6 } from 'node:net';
import type { Answer } from 'dns-packet';
import type { DnsOptions } from '../types.ts';

/** Names end with the root's dot, as dig prints them. */
const fqdn = (name: string) => (name.endsWith('.') ? name : `${name}.`);
/** A TXT or CAA string quoted as dig quotes it. */
const quote = (s: string) => `"${s.replace(/["\\]/g, '\\$&')}"`;

/** One record's data as `dig +short` prints it. */
export function formatAnswer(a: Answer): string {
  switch (a.type) {
    case 'A':
    case 'AAAA':
      return a.data;
    case 'CNAME':
    case 'NS':
    case 'PTR':
      return fqdn(a.data);
    case 'MX':
      return `${a.data.preference} ${fqdn(a.data.exchange)}`;
    case 'TXT': {
      const parts = Array.isArray(a.data) ? a.data : [a.data];
      return parts.map((p) => quote(p.toString())).join(' ');
    }
    case 'SOA': {
      const d = a.data;
      return `${fqdn(d.mname)} ${fqdn(d.rname)} ${d.serial} ${d.refresh} ${d.retry} ${d.expire} ${d.minimum}`;
    }
    case 'SRV':
      return `${a.data.priority ?? 0} ${a.data.weight ?? 0} ${a.data.port} ${fqdn(a.data.target)}`;
    case 'CAA':
      return `${a.data.flags ?? 0} ${a.data.tag} ${quote(a.data.value)}`;
    default:
      return '';
  }
}

/** The name asked for: a PTR check of an IP address asks for its in-addr.arpa or ip6.arpa name. */
export function questionName(target: string, recordType: DnsOptions['recordType']): string {
  const name = target.trim().replace(/\.$/, '');
  if (recordType !== 'PTR' || isIP(name) === 0) return name;
  if (!isIPv6(name)) return `${name.split('.').reverse().join('.')}.in-addr.arpa`;
  return `${expandIPv6(name).split('').reverse().join('.')}.ip6.arpa`;
}

/** The 32 hex digits of an IPv6 address (`::1` → `000…001`), an embedded IPv4 tail included. */
function expandIPv6(address: string): string {
  let text = address.toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((g) => g.padStart(4, '0')).join('');
}

/** `host:port`, `[v6]:port`, `host` or a bare IPv6 address (port 53): the resolver option or a `getServers()` entry. */
export function parseResolver(text: string): { host: string; port: number } | undefined {
  const s = text.trim();
  if (isIPv6(s)) return { host: s, port: 53 };
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(s);
  if (!m) return undefined;
  const port = m[3] === undefined ? 53 : Number(m[3]);
  if (port < 1 || port > 65535) return undefined;
  return { host: m[1] ?? m[2], port };
}
