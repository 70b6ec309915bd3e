/**
 * `npm run bench:tunnel`: monctl's tunnel against its peers, in one run, on one target:
 * - direct (wrk → target);
 * - monctl (edge → daemon → mux → agent → target), as shipped (dist/, see lib/tunnel-monctl.ts);
 * - nginx, one hop (keep-alive upstream, proxy_max_temp_file_size 0);
 * - ssh -R through a private sshd (aes128-gcm);
 * - nginx → ssh -R: the HTTP-aware tunnel a self-hoster builds, monctl's equivalent;
 * - localtunnel (server and client npm-installed into a temp dir).
 * Rounds alternate between the paths (each round starting one path later), at least 3 each;
 * medians are reported: req/s, p50/p99, MB/s, CPU per request of each own process (from
 * /proc/<pid>/stat), idle and peak RSS, then monctl's ratio to each peer. Last, the slow-reader
 * attack: 1,000 clients that never read a 1 MiB answer of one route, and the other route's p99;
 * then its HTTP/2 form against monctl's HTTPS edge (bench/lib/tunnel-h2-attack.ts): 8 sessions
 * × 128 zero-window streams, the daemon's peak RSS against its idle RSS and the time to reset.
 *
 * Flags: --quick (under 2 minutes), --seconds N (small responses, default 5), --download-seconds N
 * (default 5), --rounds N (default 3), --connections N (small responses, default 32),
 * --paths=a,b (names: direct, monctl, nginx, ssh, nginx-ssh, localtunnel), --only=small|download|https|pool
 * (https: the HTTPS row, monctl's TLS edge against nginx terminating TLS, bench/lib/tunnel-https.ts;
 * pool: only the three-agent row, a route of three agents against the one-agent route, bench/lib/tunnel-pool.ts),
 * --from-sources (monctl from the TypeScript sources, not dist/), --no-attack, --no-syscalls,
 * --h2-slow-readers (monctl and the HTTP/2 slow-reader row only).
 * The host (CPU model, count, kernel) is printed first; then, from a separate short run per path
 * under strace -c, the syscalls per small request of each of its processes.
 * With MONCTL_BENCH_CPU_PROF=DIR the daemon writes a V8 CPU profile there.
 * Peers whose tools are missing are installed from Debian when run as root (test/setup/provision.ts);
 * a peer is skipped only with the reason printed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTools, TUNNEL_BENCH_TOOLS } from '../test/setup/provision.ts';
import { flag } from './lib/load.ts';
import { run, stopChildren, treeCpuMs, treeMemoryMb } from './lib/procs.ts';
import { slowReaderAttack } from './lib/tunnel-attack.ts';
import { h2SlowReaderAttack } from './lib/tunnel-h2-attack.ts';
import { startMonctl } from './lib/tunnel-monctl.ts';
import { type BenchPath, prepareLocaltunnel, type Skipped, startLocaltunnel, startNginx, startSsh } from './lib/tunnel-peers.ts';
import { type Measured, type PathResult, printRatios, printResults } from './lib/tunnel-report.ts';
import { httpsBench } from './lib/tunnel-https.ts';
import { poolBench } from './lib/tunnel-pool.ts';
import { countSyscalls, hostLine, printSyscalls, type SyscallCounts } from './lib/syscalls.ts';
import { wrk } from './lib/wrk.ts';

const BIG = 100 * 1024 * 1024;
const root = join(import.meta.dirname, '..');
const node = join(root, 'node_modules/.bin/node');
const argv = process.argv;
const quick = argv.includes('--quick');
const h2Only = argv.includes('--h2-slow-readers');
/** The daemon's --slow-reader-window: bench/lib/tunnel-monctl.ts runs it with the default. */
const SLOW_READER_WINDOW_MS = 20_000;
const opt = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(1));

/** Measures one wrk run with the CPU each of the path's processes spent meanwhile. */
function measure(path: BenchPath, route: string, connections: number, seconds: number): Measured {
  const pids = Object.fromEntries(Object.entries(path.procs).map(([k, f]) => [k, f()]));
  const before = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, treeCpuMs(p)]));
  const f = wrk(`${path.url}${route}`, path.host, connections, seconds);
  const cpuMs = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, treeCpuMs(p) - before[k]]));
  return { f, cpuMs };
}

const memory = (path: BenchPath, key: 'rss' | 'peak') =>
  Object.fromEntries(Object.entries(path.procs).map(([k, f]) => [k, treeMemoryMb(f())[key]]));

async function main(): Promise<void> {
  ensureTools({ wrk: TUNNEL_BENCH_TOOLS.wrk });
  const seconds = flag('seconds', quick ? 2 : 5);
  const downloadSeconds = flag('download-seconds', quick ? 2 : 5);
  const rounds = Math.max(3, flag('rounds', 3));
  const connections = flag('connections', 32);
  const only = opt('only');
  const monctlOnly = h2Only || only === 'pool';
  const wanted = new Set((opt('paths') ?? (monctlOnly ? 'monctl' : 'direct,monctl,nginx,ssh,nginx-ssh,localtunnel')).split(','));
  const dir = mkdtempSync(join(tmpdir(), 'monctl-bench-tunnel-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const started = Date.now();
  try {
    const [, targetPort] = await run(node, [join(root, 'bench/tunnel.ts'), '--serve-target'], {
      ready: (l) => (/^\d+$/.test(l) ? l : undefined),
    });
    const target = `http://127.0.0.1:${targetPort}`;
    const served = async () => Number(await (await fetch(`${target}/count`)).text());
    const paths: BenchPath[] = [];
    const skipped: Skipped[] = [];
    const attempt = async (name: string, key: string, setup: () => Promise<BenchPath[]>) => {
      if (!wanted.has(key)) return;
      try {
        paths.push(...(await setup()));
      } catch (err) {
        skipped.push({ name, skipped: (err as Error).message.split('\n')[0] });
      }
    };
    const localtunnel = wanted.has('localtunnel') ? prepareLocaltunnel(dir) : undefined;
    localtunnel?.catch(() => {}); // its failure is reported when the path is set up
    await attempt('direct', 'direct', async () => [{ name: 'direct', url: target, host: 'bench.test', procs: {} }]);
    const monctl = wanted.has('monctl')
      ? await startMonctl(root, dir, target, { fromSources: argv.includes('--from-sources'), profDir: process.env.MONCTL_BENCH_CPU_PROF })
      : undefined;
    if (monctl) paths.push(monctl);
    let tools: string | undefined;
    try {
      ensureTools(TUNNEL_BENCH_TOOLS);
    } catch (err) {
      tools = (err as Error).message.split('\n')[0];
    }
    let ssh: Awaited<ReturnType<typeof startSsh>> | undefined;
    await attempt('ssh -R', wanted.has('nginx-ssh') ? 'nginx-ssh' : 'ssh', async () => {
      if (tools) throw new Error(tools);
      ssh = await startSsh(dir, Number(targetPort));
      if (!wanted.has('ssh')) return [];
      return [{ name: 'ssh -R', url: `http://127.0.0.1:${ssh.port}`, host: 'bench.test', procs: { sshd: ssh.sshd, ssh: ssh.ssh } }];
    });
    await attempt('nginx', wanted.has('nginx-ssh') ? 'nginx-ssh' : 'nginx', async () => {
      if (tools) throw new Error(tools);
      const withSsh = ssh && wanted.has('nginx-ssh');
      const nginx = await startNginx(dir, withSsh ? [Number(targetPort), ssh!.port] : [Number(targetPort)]);
      const out: BenchPath[] = [];
      if (wanted.has('nginx'))
        out.push({ name: 'nginx', url: `http://127.0.0.1:${nginx.ports[0]}`, host: 'bench.test', procs: { nginx: nginx.procs } });
      if (withSsh)
        out.push({
          name: 'nginx → ssh -R',
          url: `http://127.0.0.1:${nginx.ports[1]}`,
          host: 'bench.test',
          procs: { nginx: nginx.procs, sshd: ssh!.sshd, ssh: ssh!.ssh },
        });
      return out;
    });
    if (wanted.has('nginx-ssh') && !paths.some((p) => p.name === 'nginx → ssh -R'))
      skipped.push({ name: 'nginx → ssh -R', skipped: 'needs both nginx and ssh -R (see above)' });
    await attempt('localtunnel', 'localtunnel', async () => [await startLocaltunnel(localtunnel!, node, Number(targetPort))]);

    await new Promise((r) => setTimeout(r, 2000)); // settle before the idle figures
    const results: PathResult[] = paths.map((p) => ({
      name: p.name,
      small: [],
      download: [],
      idle: memory(p, 'rss'),
      after: {},
      peak: {},
    }));
    if (!h2Only) for (const p of paths) wrk(`${p.url}/`, p.host, connections, 1); // warm-up (JIT, connection pools)
    for (let round = 0; round < (h2Only ? 0 : rounds); round++) {
      const order = paths.map((_, i) => (i + round) % paths.length);
      if (only !== 'download' && only !== 'https' && only !== 'pool')
        for (const i of order) results[i].small.push(measure(paths[i], '/', connections, seconds));
      if (only !== 'small' && only !== 'https' && only !== 'pool')
        for (const i of order) results[i].download.push(measure(paths[i], '/big', 4, downloadSeconds));
    }
    paths.forEach((p, i) => Object.assign(results[i], { after: memory(p, 'rss'), peak: memory(p, 'peak') }));
    const syscalls: SyscallCounts[] = [];
    if (!argv.includes('--no-syscalls') && only !== 'download' && only !== 'https' && only !== 'pool') {
      try {
        ensureTools({ strace: TUNNEL_BENCH_TOOLS.strace });
        for (const p of paths) {
          if (Object.keys(p.procs).length)
            syscalls.push(await countSyscalls(p, dir, () => wrk(`${p.url}/`, p.host, connections, Math.min(seconds, 2))));
        }
      } catch (err) {
        skipped.push({ name: 'syscalls per request', skipped: (err as Error).message.split('\n')[0] });
      }
    }

    const attacks: string[] = [];
    if (!argv.includes('--no-attack') && !monctlOnly) {
      if (monctl) {
        await monctl.addRoute('big.test');
        attacks.push(...(await slowReaderAttack(monctl, 'big.test', Math.min(seconds, 3), served)));
      }
      const peer = paths.find((p) => p.name === 'nginx → ssh -R');
      if (peer && !quick) attacks.push(...(await slowReaderAttack(peer, 'bench.test', Math.min(seconds, 3), served)));
    }

    console.log(hostLine());
    if (!monctlOnly) {
      console.log(
        `wrk, 1 thread; ${rounds} rounds, alternating paths; small responses: ${seconds} s over ${connections} connections; ` +
          `100 MB downloads: ${downloadSeconds} s over 4. Own processes only: not wrk, not the target. nginx: 1 worker.`,
      );
      for (const s of skipped) console.log(`skipped: ${s.name}: ${s.skipped}`);
      console.log('');
      printResults(results);
      printRatios(results);
      if (syscalls.length) printSyscalls(syscalls);
    }
    if (attacks.length) {
      console.log(
        '\nslow-reader attack: 1,000 clients ask one route for 1 MiB and never read; another route meanwhile (wrk, 8 connections):',
      );
      for (const line of attacks) console.log(`  ${line}`);
    }
    if (monctl && (h2Only || (!argv.includes('--no-attack') && !only))) {
      const lines = await h2SlowReaderAttack(monctl, target, SLOW_READER_WINDOW_MS);
      console.log(
        '\nHTTP/2 slow readers: 8 sessions with a zero receive window open 128 streams each to a 1 MiB answer, never read, ping every second:',
      );
      for (const line of lines) console.log(`  ${line}`);
    }
    if (monctl && !h2Only && (!only || only === 'https')) {
      await httpsBench({ admin: monctl.admin, agentId: monctl.agentId, target, edgeTls: monctl.edgeTls, dir, seconds, connections, wrk });
    }
    if (monctl && !h2Only && (!only || only === 'pool')) {
      const straceDir = argv.includes('--no-syscalls') ? undefined : dir;
      const { lines, syscalls: poolSyscalls } = await poolBench({ monctl, target, seconds, connections, rounds, straceDir, wrk });
      console.log(
        `\nthree agents on one route (round-robin, three \`monctl agent\` processes, the same target) against the single-agent route; ` +
          `small responses, ${rounds} rounds alternating, ${seconds} s over ${connections} connections each, medians:`,
      );
      for (const line of lines) console.log(`  ${line}`);
      if (poolSyscalls.length) printSyscalls(poolSyscalls);
    }
    console.log(`\n(${Math.round((Date.now() - started) / 1000)} s)`);
  } finally {
    await stopChildren();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (argv.includes('--serve-target')) {
  // The target runs in its own process, as a real service would: '/' a small answer, '/big' 100 MB,
  // '/mib' 1 MiB (the slow-reader attack; '/count' says how many of those it has sent).
  const chunk = Buffer.alloc(1024 * 1024, 'x');
  let mibs = 0;
  const server = createServer((req, res) => {
    if (req.url === '/count') return void res.end(String(mibs));
    if (req.url === '/mib') {
      mibs++;
      return void res.end(chunk);
    }
    if (req.url !== '/big') return void res.end('hello, world');
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': BIG });
    let left = BIG / chunk.length;
    const pump = () => {
      while (left > 0) {
        left--;
        if (left === 0) return void res.end(chunk);
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
    };
    pump();
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
} else {
  await main();
}
