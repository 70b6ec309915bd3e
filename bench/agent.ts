/**
 * `npm run bench:agent`: the agent's memory, idle and at peak during 4
 * concurrent 100 MB downloads through a route, for the three ways it runs:
 * - `ts`: `monctl agent` from a clone (the TypeScript sources on Node 24): the baseline;
 * - `mjs`: `node --max-semi-space-size=1 --no-maglev dist/agent.mjs`, the one-file bundle, as the README runs it;
 * - `sea`: `dist/monctl-agent`, the single executable.
 * It builds both agents first (npm run build:agent). Targets: idle < 50 MB, peak < 80 MB.
 *
 *   npm run bench:agent -- --seconds 10
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { operations } from '../src/api/operations.ts';
import { ROOT, startDaemon } from '../test/helpers/daemon.ts';
import { flag, fmt } from './lib/load.ts';
import { memoryMb } from './lib/measure.ts';

const seconds = flag('seconds', 10);
const BIG = 100 * 1024 * 1024;
const node = join(ROOT, 'node_modules/.bin/node');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const built = spawnSync('npm', ['run', '--silent', 'build:agent'], { cwd: ROOT, encoding: 'utf8' });
if (built.status !== 0) throw new Error(`build:agent failed: ${built.stderr}`);

// The target: 100 MB of one repeated 1 MiB chunk, written with backpressure.
const chunk = Buffer.alloc(1024 * 1024, 'x');
const target = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': BIG });
  let left = BIG / chunk.length;
  const pump = () => {
    while (left-- > 0) if (!res.write(chunk)) return void res.once('drain', pump);
    res.end();
  };
  pump();
});
await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;

/** Downloads /big through the edge on `conns` connections, again and again, until `until`; returns MB received. */
async function download(edge: URL, host: string, conns: number, until: number): Promise<number> {
  let bytes = 0;
  const agent = new http.Agent({ keepAlive: true });
  const one = () =>
    new Promise<void>((resolve, reject) => {
      http
        .get({ host: edge.hostname, port: edge.port, path: '/big', headers: { host }, agent }, (res) => {
          res.on('data', (c: Buffer) => (bytes += c.length));
          res.on('end', resolve);
          res.on('error', reject);
        })
        .on('error', reject);
    });
  await Promise.all(
    Array.from({ length: conns }, async () => {
      while (Date.now() < until) await one();
    }),
  );
  agent.destroy();
  return bytes / 1e6;
}

const d = await startDaemon({ env: { MONCTL_SCHEDULER: 'off' } });
const dir = mkdtempSync(join(tmpdir(), 'monctl-bench-agent-'));
// Run as installed: a fresh copy. The file the build just wrote sits whole in the page cache, and
// running it from there maps some 15 MB more of it (fault-around), which no installed copy would.
const sea = join(dir, 'monctl-agent');
copyFileSync(join(ROOT, 'dist/monctl-agent'), sea);
const children: ChildProcess[] = [];
process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));
const variants: Array<[string, string, string[]]> = [
  ['ts', join(ROOT, 'bin/monctl'), ['agent']],
  ['mjs', node, ['--max-semi-space-size=1', '--no-maglev', join(ROOT, 'dist/agent.mjs')]],
  ['sea', sea, []],
];
const rows: Array<{ name: string; idle: number; peak: number; mbps: number }> = [];
try {
  for (const [name, cmd, args] of variants) {
    const agentRow = await d.admin.call(operations.createAgent, { body: { name } });
    const { token } = await d.admin.call(operations.rotateAgentToken, { params: { id: agentRow.id } });
    writeFileSync(join(dir, name), token, { mode: 0o600 });
    await d.admin.call(operations.createRoute, {
      body: { name, type: 'HTTP', agentId: agentRow.id, target: targetUrl, hostname: `${name}.test` },
    });
    const child = spawn(cmd, [...args, '--server', d.url, '--token-file', join(dir, name), '--log-level', 'warn'], { stdio: 'inherit' });
    children.push(child);
    while ((await d.admin.call(operations.getAgent, { params: { id: agentRow.id } })).status !== 'CONNECTED') await sleep(100);
    await sleep(3000); // settled: start-up garbage collected
    const idle = memoryMb(child.pid!).rss;
    const started = Date.now();
    const mb = await download(new URL(d.edgeUrl), `${name}.test`, 4, started + seconds * 1000);
    const mbps = mb / ((Date.now() - started) / 1000);
    rows.push({ name, idle, peak: memoryMb(child.pid!).peak, mbps });
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
} finally {
  children.forEach((c) => c.kill('SIGKILL'));
  await d.stop();
  target.close();
  rmSync(dir, { recursive: true, force: true });
}

const base = rows[0];
console.log(`Agent RSS, idle (3 s after connecting) and peak (VmHWM) during ${seconds} s of 4 concurrent 100 MB downloads.`);
console.log(
  `dist/monctl-agent: ${fmt(statSync(join(ROOT, 'dist/monctl-agent')).size / 1e6)} MB; dist/agent.mjs: ${fmt(statSync(join(ROOT, 'dist/agent.mjs')).size / 1e3)} KB.\n`,
);
console.log('agent  idle MB  peak MB  MB/s     idle vs ts  peak vs ts  targets (idle < 50, peak < 80)');
for (const r of rows) {
  const verdict = r.idle < 50 && r.peak < 80 ? 'PASS' : 'MISS';
  console.log(
    `${r.name.padEnd(6)} ${fmt(r.idle).padStart(7)}  ${fmt(r.peak).padStart(7)}  ${fmt(r.mbps).padStart(7)}  ${fmt(r.idle / base.idle, 2).padStart(10)}  ${fmt(r.peak / base.peak, 2).padStart(10)}  ${verdict}`,
  );
}
