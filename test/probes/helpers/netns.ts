/**
 * A network namespace for the PING tests: reachable from the root namespace through a veth pair,
 * with its own nftables rules (ICMP dropped inside it) and its own net.ipv4.ping_group_range.
 * Deleting the namespace removes the veth pair with it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';

export interface NetNs {
  name: string;
  /** The root namespace's end of the veth pair. */
  hostIp: string;
  /** An address inside the namespace, by its last octet. */
  ip(lastOctet: number): string;
  /** The same address in IPv6 (a unique local prefix of the namespace's own). */
  ip6(lastOctet: number): string;
  exec(cmd: string, args: string[], input?: string): string;
  /** Runs `node <script> <args>` inside the namespace (argv[0] is Node 24, as the tests run under). */
  node(script: string, args: string[], wrap?: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  remove(): void;
}

function run(cmd: string, args: string[], input?: string): string {
  return execFileSync(cmd, args, { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}

/** A namespace with `lo` up and, when `lastOctets` is given, a veth to it carrying those addresses. */
export function createNetNs(opts: { lastOctets?: number[]; pingGroupRange?: string; nft?: (ns: NetNs) => string } = {}): NetNs {
  const id = `${process.pid.toString(36)}${randomInt(1 << 20).toString(36)}`;
  const name = `mping-${id}`;
  // 198.18.0.0/15 is reserved for benchmarking: it is on no network this host could reach.
  const prefix = `198.19.${randomInt(256)}`;
  const prefix6 = `fd29:${randomInt(0x10000).toString(16)}::`;
  const ns: NetNs = {
    name,
    hostIp: `${prefix}.1`,
    ip: (n) => `${prefix}.${n}`,
    ip6: (n) => `${prefix6}${n}`,
    exec: (cmd, args, input) => run('ip', ['netns', 'exec', name, cmd, ...args], input),
    node(script, args, wrap = []) {
      return new Promise((resolve, reject) => {
        const child = spawn('ip', ['netns', 'exec', name, ...wrap, process.execPath, script, ...args], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => (stdout += d));
        child.stderr.on('data', (d) => (stderr += d));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
    },
    remove() {
      try {
        run('ip', ['netns', 'del', name]);
      } catch {
        // already gone
      }
    },
  };
  try {
    run('ip', ['netns', 'add', name]);
    ns.exec('ip', ['link', 'set', 'lo', 'up']);
    if (opts.pingGroupRange) ns.exec('sysctl', ['-qw', `net.ipv4.ping_group_range=${opts.pingGroupRange}`]);
    if (opts.lastOctets?.length) {
      const host = `vh-${id}`.slice(0, 15);
      const peer = `vn-${id}`.slice(0, 15);
      run('ip', ['link', 'add', host, 'type', 'veth', 'peer', 'name', peer, 'netns', name]);
      run('ip', ['addr', 'add', `${ns.hostIp}/24`, 'dev', host]);
      // nodad: the addresses are usable at once, not after duplicate address detection.
      run('ip', ['addr', 'add', `${ns.ip6(1)}/64`, 'dev', host, 'nodad']);
      run('ip', ['link', 'set', host, 'up']);
      for (const n of opts.lastOctets) {
        ns.exec('ip', ['addr', 'add', `${ns.ip(n)}/24`, 'dev', peer]);
        ns.exec('ip', ['addr', 'add', `${ns.ip6(n)}/64`, 'dev', peer, 'nodad']);
      }
      ns.exec('ip', ['link', 'set', peer, 'up']);
    }
    if (opts.nft) ns.exec('nft', ['-f', '-'], opts.nft(ns));
  } catch (err) {
    ns.remove();
    throw err;
  }
  return ns;
}
