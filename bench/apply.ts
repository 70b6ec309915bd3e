/**
 * Bulk creation from a file: `monctl apply -f` of N HTTP resources against a fresh daemon
 * (written through `POST /admin/api/resources/batch`, 10,000 per request), against the same
 * resources created one `POST /api/resources` at a time, 8 in flight, as before. The baseline
 * runs a sample (10,000 by default) on its own fresh daemon and is extrapolated to N.
 *
 *   npm run bench:apply                          # 1,000,000 resources (target: under 5 minutes)
 *   npm run bench:apply -- --resources 100000    # the quick mode
 *
 * The resources are inactive: the bench measures creation, not a million first checks
 * competing with it for the same two cores (bench:probes measures those).
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { request, Agent } from 'undici';
import { ROOT, startDaemon, type TestDaemon } from '../test/helpers/daemon.ts';
import { flag, fmt } from './lib/load.ts';
import { memoryMb } from './lib/measure.ts';
import { processTree, treeMemoryMb } from './lib/procs.ts';

const count = flag('resources', 1_000_000);
const sample = Math.min(count, flag('sample', 10_000));
const env = { MONCTL_CHECK_RESPONSES: '0' };
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

const dir = mkdtempSync(join(tmpdir(), 'bench-apply-'));
try {
  console.log(`# bench:apply, ${count} HTTP resources from a YAML file; CPU ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} cores)`);
  console.log(`load average at start: ${load()}`);
  const file = join(dir, 'resources.yaml');
  await writeSpec(file, count);
  console.log(`file: ${fmt(statSync(file).size / 2 ** 20)} MiB`);

  const baseline = await startDaemon({ env });
  let singleRate: number;
  try {
    singleRate = sample / (await oneByOne(baseline, sample));
  } finally {
    await baseline.stop();
  }

  const daemon = await startDaemon({ env });
  try {
    const started = Date.now();
    const cli = await applyFile(daemon, file);
    const seconds = (Date.now() - started) / 1000;
    const daemonPeak = memoryMb(daemon.proc.pid!).peak;
    const listed = await countResources(daemon);
    if (listed !== count) throw new Error(`the daemon has ${listed} resources, not ${count}`);
    const rate = count / seconds;
    console.log(`monctl apply -f: ${count} resources in ${fmt(seconds)} s, ${fmt(rate, 0)} resources/s`);
    console.log(
      `  peak RSS: daemon ${fmt(memoryMb(daemon.proc.pid!).peak, 0)} MB (${fmt(daemonPeak, 0)} MB when apply ended), CLI ${fmt(cli.peakMb, 0)} MB`,
    );
    console.log(
      `baseline, POST /api/resources one at a time (8 in flight): ${fmt(singleRate, 0)} resources/s over a sample of ${sample}, ` +
        `so ${fmt(count / singleRate, 0)} s for ${count} (extrapolated)`,
    );
    console.log(`load average at end: ${load()}`);
    const target = count >= 1_000_000 ? ' (target: under 300 s for 1,000,000)' : '';
    console.log(
      `RESULT apply: ${fmt(seconds)} s, ${fmt(rate, 0)} resources/s, ${fmt(rate / singleRate, 1)}x the one-at-a-time baseline${target}`,
    );
  } finally {
    await daemon.stop();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** A file as a user would write it: a group and N HTTP resources, streamed out (a million is over 100 MB). */
async function writeSpec(path: string, n: number): Promise<void> {
  const out = createWriteStream(path);
  const write = (text: string) => (out.write(text) ? undefined : new Promise<void>((r) => out.once('drain', () => r())));
  await write('groups:\n  - name: fleet\n    visibility: PUBLIC\nresources:\n');
  for (let i = 0; i < n; i++) {
    await write(
      `  - name: site-${i}\n    type: HTTP\n    target: https://site-${i}.example.net/health\n    intervalSeconds: 300\n    active: false\n    groups: [fleet]\n`,
    );
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
}

/** Runs `monctl apply -f` and follows the peak RSS of its process tree. */
function applyFile(d: TestDaemon, file: string): Promise<{ peakMb: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(ROOT, 'bin/monctl'), ['apply', '-f', file], {
      env: { ...process.env, MONCTL_SERVER: d.url, MONCTL_API_KEY: d.adminKey, MONCTL_CONFIG_DIR: dir },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    let peakMb = 0;
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setInterval(() => {
      peakMb = Math.max(peakMb, treeMemoryMb(processTree(child.pid!)).peak);
    }, 200);
    child.on('exit', (code) => {
      clearInterval(timer);
      if (code === 0) resolve({ peakMb });
      else reject(new Error(`monctl apply exited with ${code}: ${stderr.slice(-2000)}`));
    });
  });
}

/** The baseline: `n` resources like the file's, one POST each, 8 in flight. Resolves with the seconds. */
async function oneByOne(d: TestDaemon, n: number): Promise<number> {
  const api = new Agent({ connections: 8 });
  const started = Date.now();
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < n) {
          const i = next++;
          const res = await request(`${d.url}/api/resources`, {
            method: 'POST',
            dispatcher: api,
            headers: { authorization: `Bearer ${d.adminKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              name: `site-${i}`,
              resourceType: 'HTTP',
              target: `https://site-${i}.example.net/health`,
              intervalSeconds: 300,
              active: false,
            }),
          });
          const text = await res.body.text();
          if (res.statusCode !== 200) throw new Error(`create ${i}: ${res.statusCode} ${text}`);
        }
      }),
    );
  } finally {
    await api.close();
  }
  return (Date.now() - started) / 1000;
}

/** How many resources the daemon has, counted through the paged admin list. */
async function countResources(d: TestDaemon): Promise<number> {
  let total = 0;
  let next: string | undefined = '/admin/api/resources?limit=10000';
  while (next) {
    const res: Awaited<ReturnType<typeof request>> = await request(d.url + next, { headers: { authorization: `Bearer ${d.adminKey}` } });
    const items = (await res.body.json()) as unknown[];
    total += items.length;
    next = /<([^>]+)>;\s*rel="next"/.exec(String(res.headers.link ?? ''))?.[1];
  }
  return total;
}
