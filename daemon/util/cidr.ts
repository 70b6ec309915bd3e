import ipaddr from 'ipaddr.js';

/** A parsed CIDR block; IPv4-mapped IPv6 addresses are matched as IPv4. */
export type Block = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * `10.0.0.0/8`, `2001:db8::/32`, or a bare address (a /32 or /128). Returns
 * the canonical text (host bits cleared: `10.1.2.3/8` is `10.0.0.0/8`), or
 * undefined when it is neither.
 */
export function normaliseCidr(text: string): string | undefined {
  const block = parseCidr(text);
  if (!block) return undefined;
  const [addr, bits] = block;
  const network =
    addr.kind() === 'ipv4'
      ? ipaddr.IPv4.networkAddressFromCIDR(`${addr.toString()}/${bits}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${addr.toString()}/${bits}`);
  return `${network.toString()}/${bits}`;
}

export function parseCidr(text: string): Block | undefined {
  const value = text.trim();
  try {
    if (value.includes('/')) {
      const [addr, bits] = ipaddr.parseCIDR(value);
      return unmap(addr, bits);
    }
    const addr = ipaddr.parse(value);
    return unmap(addr, addr.kind() === 'ipv4' ? 32 : 128);
  } catch {
    return undefined;
  }
}

/** `::ffff:10.0.0.0/104` is `10.0.0.0/8`: the edge sees IPv4 clients as mapped addresses on a dual-stack socket. */
function unmap(addr: ipaddr.IPv4 | ipaddr.IPv6, bits: number): Block {
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    return [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96];
  }
  return [addr, bits];
}

/** A client address as the edge compares it (IPv4-mapped IPv6 as IPv4); undefined when not an address. */
export function parseIp(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  try {
    return ipaddr.process(text.trim());
  } catch {
    return undefined;
  }
}

/** Whether `ip` is in one of the blocks. */
export function inBlocks(ip: ipaddr.IPv4 | ipaddr.IPv6, blocks: readonly Block[]): boolean {
  for (const [net, bits] of blocks) {
    if (net.kind() === ip.kind() && ip.match(net as never, bits)) return true;
  }
  return false;
}
