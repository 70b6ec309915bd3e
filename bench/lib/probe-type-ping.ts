/**
 * PING for `npm run bench:probes -- --type ping`: resource i pings a loopback address of its own
 * (127.0.0.0/8 answers on every address, so no target process is needed: the kernel replies).
 * `answered` is the kernel's count of echo replies sent (/proc/net/snmp OutEchoReps, host-wide in
 * this network namespace, so other pings on the machine count too).
 *
 * Baseline: fping sending the same echoes (count, the interval between a target's echoes, the same
 * rate overall), its process CPU from the shell's `times`. fping is what a monitoring host would
 * run instead; its CPU per check is what ICMP costs without the daemon around it.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { ensureTools, PROBE_BENCH_TOOLS } from '../../test/setup/provision.ts';
import type { ProbeTypeBench } from './probe-type.ts';

/** As the daemon's default check (docs/API.md#check-types), IPv4 so that fping sends the same. */
const OPTIONS = { count: 3, intervalMs: 200, family: 'ipv4' };

/** Loopback address i: 127.1.0.0 onwards, one per resource (up to 16 million). */
function addressOf(i: number): string {
  return `127.${1 + ((i >> 16) & 0xff)}.${(i >> 8) & 0xff}.${i & 0xff}`;
}

function echoRepliesSent(): number {
  const lines = readFileSync('/proc/net/snmp', 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('Icmp:'));
  const names = lines[0].split(/\s+/);
  return Number(lines[1].split(/\s+/)[names.indexOf('OutEchoReps')]);
}

/** `times`' second line: the children's user and system time, `0m1.234s 0m0.567s`. */
function childCpuMs(times: string): number {
  const line = times.trim().split('\n').at(-1) ?? '';
  let ms = 0;
  for (const m of line.matchAll(/(\d+)m([\d.]+)s/g)) ms += (Number(m[1]) * 60 + Number(m[2])) * 1000;
  return ms;
}

const bench: ProbeTypeBench = {
  type: 'PING',
  baselineName: 'fping, the same echoes',
  async start() {
    return {
      resource: (i) => ({ target: addressOf(i), options: OPTIONS }),
      answered: async () => echoRepliesSent(),
      stop: async () => undefined,
    };
  },
  baseline(_targets, _resources, perSecond, seconds) {
    ensureTools(PROBE_BENCH_TOOLS);
    const checks = Math.max(1, Math.round(perSecond * seconds));
    // One fping for every check, each target its own address: -i spaces all echoes so that the rate
    // is perSecond checks of `count` echoes, -p spaces one target's echoes as intervalMs does.
    const spacingMs = Math.max(0.1, 1000 / (perSecond * OPTIONS.count));
    const args = ['-q', '-c', String(OPTIONS.count), '-p', String(OPTIONS.intervalMs), '-i', spacingMs.toFixed(2), '-f', '-'];
    return new Promise((resolve, reject) => {
      const shell = spawn('bash', ['-c', `fping ${args.join(' ')} 2>&1; times >&2`], { stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let times = '';
      shell.stdout.on('data', (d) => (out += d));
      shell.stderr.on('data', (d) => (times += d));
      shell.on('error', reject);
      shell.on('close', () => {
        // `127.1.0.1 : xmt/rcv/%loss = 3/3/0%, …`: a check succeeded when one echo came back.
        const ok = [...out.matchAll(/xmt\/rcv\/%loss = \d+\/(\d+)\//g)].filter((m) => Number(m[1]) > 0).length;
        resolve({ cpuMs: childCpuMs(times), checks: ok });
      });
      shell.stdin.end(`${Array.from({ length: checks }, (_, i) => addressOf(i)).join('\n')}\n`);
    });
  },
};
export default bench;
