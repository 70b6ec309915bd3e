/**
 * Status page: a page of 1,000 resources in 20 groups with 90 days of
 * rollups, under the same load as `GET /api/resources` (the same 1,000
 * resources, anonymous), in the same run. Prints p50/p99 latency and req/s
 * of both and their ratio (per round, median round), the page's bytes on the
 * wire (brotli, gzip, none), and the time of a cold render (cache miss).
 * Targets: p99 under 50 ms, under 60 KB compressed, with `--posted` posted incidents on the
 * page (default 50: 5 open, the rest resolved in the last 14 days, 3 or 4 updates each). The page
 * is also compared with its own brotli bytes served as a static file by node:http in the same run.
 *
 *   npm run bench:status -- --seconds 5 --rounds 3 --connections 32 --resources 1000 --groups 20 --posted 50
 *
 * `--background-resources N --background-interval S`: N more HTTP resources, on no page, checked
 * every S seconds (default 300) against local targets in a child process, `--background-flapping`
 * of them (default 0.01) changing status on every check, all checked once before
 * the measurements; the page is then measured while they are checked, and the checks done in that
 * window are printed against those due.
 *
 * The resources are checked once against a local target (a tenth answer 503,
 * so the page shows some down); rollups and a few incidents are written into
 * the database as the rollup job and the incident engine would have: per
 * resource-day 97 % at 100 %, 2.5 % between 99 and 100 %, 0.5 % lower; and
 * `--checks-this-hour` raw checks per resource in the hour under way, which
 * the page reads too (not rolled up yet).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { operations } from '../src/api/operations.ts';
import { startDaemon } from '../test/helpers/daemon.ts';
import { until } from '../test/helpers/http.ts';
import { getRaw } from '../test/status/fetch-raw.ts';
import { SeedDb } from '../test/status/seed-db.ts';
import { PostsDb } from '../test/status/seed-posts.ts';
import { flag, fmt, load, type LoadResult } from './lib/load.ts';
import { quantileMs, readBuckets } from './lib/server-time.ts';
import { type Background, startBackground } from './lib/background-checks.ts';

const seconds = flag('seconds', 5);
const rounds = flag('rounds', 3);
const count = flag('resources', 1000);
const groupCount = flag('groups', 20);
const connections = flag('connections', 32);
/** Raw checks per resource in the hour under way (not rolled up: the page reads them too); 120 is a 30 s interval an hour in. */
const rawPerResource = flag('checks-this-hour', 120);
/** Posted incidents on the page (open or resolved in the last 14 days: all of them shown). */
const postedCount = flag('posted', 50);
const backgroundCount = flag('background-resources', 0);
const backgroundInterval = flag('background-interval', 300);
/** The share of background resources that change status on every check (default 1 %). */
const backgroundFlapping = flag('background-flapping', 0.01);
/**
 * The list the page is compared with: the page's own resources. With background resources it is their first
 * page (`?limit`): the whole list of a million is another bench's subject (bench:api), and would load the daemon.
 */
const listPath = backgroundCount > 0 ? `/api/resources?limit=${count}` : '/api/resources';
const DAY = 86_400_000;

// A deterministic generator: the same data on every run.
let seed = 42;
const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;

const target = createServer((req, res) => {
  res.writeHead(/\/down\//.test(req.url ?? '') ? 503 : 200, { connection: 'close' }).end('ok');
});
await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
const daemon = await startDaemon({ env: { MONCTL_CHECK_RESPONSES: '0' } });
let background: Background | undefined;
try {
  const a = daemon.admin;
  const groups: number[] = [];
  for (let g = 0; g < groupCount; g++) {
    groups.push((await a.call(operations.createGroup, { body: { name: `Service area ${g + 1}`, visibility: 'PUBLIC' } })).id);
  }
  const ids: number[] = [];
  for (let i = 0; i < count; i += 25) {
    const batch = Array.from({ length: Math.min(25, count - i) }, (_, j) =>
      a.call(operations.createResource, {
        body: {
          name: `service-${String(i + j).padStart(4, '0')}.example.com`,
          resourceType: 'HTTP',
          intervalSeconds: 86400,
          target: `${targetUrl}/${(i + j) % 10 === 7 ? 'down' : 'up'}/${i + j}`,
          groupIds: [groups[(i + j) % groupCount]],
        },
      }),
    );
    for (const created of await Promise.all(batch)) ids.push(created.id);
  }
  await until(async () => (await a.call(operations.listAdminResources)).every((r) => r.latestCheckedAt !== null), 500);

  const db = await SeedDb.open(daemon);
  const now = Date.now();
  for (const id of ids) {
    await db.rollups(
      id,
      () => {
        const r = random();
        return r < 0.97
          ? [1440, 1440]
          : r < 0.995
            ? [1440, 1440 - 1 - Math.floor(random() * 14)]
            : [1440, Math.floor(1440 * (0.8 + random() * 0.19))];
      },
      () => [60, random() < 0.99 ? 60 : 58],
      now,
    );
  }
  for (let i = 0; i < 40; i++) {
    const id = ids[Math.floor(random() * ids.length)];
    const opened = now - Math.floor(random() * 89 * DAY);
    await db.incident(id, opened, opened + Math.floor(random() * 3 * 3_600_000), 'connect ETIMEDOUT');
  }
  for (const id of ids) await db.rawChecks(id, rawPerResource, id % 10 === 7 ? 2 : 0, now);
  await db.close();
  // Seeding takes long enough for the daemon to close the client's idle keep-alive connection: a request that
  // raced that close is sent again (it never reached the handler).
  const body = { slug: 'bench', title: 'Bench status', groupIds: groups };
  const page = await a.call(operations.createStatusPage, { body }).catch((err) => {
    if ((err as { code?: string }).code !== 'connection') throw err;
    return a.call(operations.createStatusPage, { body });
  });

  // Posted incidents as an operator writes them: a title, two resources, 3 or 4 updates of a sentence or two each.
  const posts = await PostsDb.open(daemon);
  const states = ['investigating', 'identified', 'monitoring', 'resolved'] as const;
  for (let i = 0; i < postedCount; i++) {
    const open = i < 5;
    const start = now - (open ? (i + 1) * 3_600_000 : Math.floor(random() * 13 * DAY) + DAY);
    const steps = open ? 1 + (i % 3) : 3 + (i % 2);
    const updates = Array.from({ length: steps }, (_, k) => ({
      state: open ? states[k] : k === steps - 1 ? ('resolved' as const) : states[Math.min(k, 2)],
      html: `<p>Update ${k + 1} on incident ${i + 1}: requests to <strong>service-${String((i * 37) % count).padStart(4, '0')}</strong> ${
        k === steps - 1 && !open
          ? 'succeed again and we are watching error rates.'
          : 'fail for some customers in one region; we are working on it.'
      }</p>`,
      at: start + k * 20 * 60_000,
    }));
    await posts.incident(page.id, {
      title: `Elevated errors on service area ${(i % groupCount) + 1} (${i + 1})`,
      impact: (['minor', 'major', 'critical', 'none'] as const)[i % 4],
      resources: [
        [ids[(i * 37) % ids.length], 'major'],
        [ids[(i * 53 + 1) % ids.length], 'minor'],
      ],
      updates,
    });
  }
  await posts.close();
  if (backgroundCount > 0)
    background = await startBackground(daemon, backgroundCount, backgroundInterval, { flapping: backgroundFlapping });
  const window = await background?.window();

  // Cold renders. The first read of the page builds everything, rollups included; each footer change after
  // it is a new version of the page (the next GET builds its view again; the uptime figures stay cached 60 s).
  const coldTime = async () => {
    const t0 = performance.now();
    await getRaw(daemon.url, '/status/bench', { 'accept-encoding': 'br' });
    return performance.now() - t0;
  };
  const first = await coldTime();
  const cold: number[] = [];
  for (let i = 0; i < 5; i++) {
    await a.call(operations.updateStatusPage, { params: { id: page.id }, body: { footer: `run ${i}` } });
    cold.push(await coldTime());
  }
  cold.sort((x, y) => x - y);

  const sizes: Record<string, number> = {};
  for (const enc of ['br', 'gzip', 'identity']) {
    const res = await getRaw(daemon.url, '/status/bench', { 'accept-encoding': enc });
    sizes[enc] = res.body.length;
  }
  const json = await getRaw(daemon.url, listPath);
  // The floor: the page's own brotli bytes as a static file from node:http (no store, no rendering, no compression).
  const pageBr = (await getRaw(daemon.url, '/status/bench', { 'accept-encoding': 'br' })).body;
  const staticServer = createServer((_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'br', 'content-length': pageBr.length })
      .end(pageBr);
  });
  await new Promise<void>((r) => staticServer.listen(0, '127.0.0.1', r));
  const staticUrl = `http://127.0.0.1:${(staticServer.address() as AddressInfo).port}`;

  const headers = { 'accept-encoding': 'gzip, deflate, br' };
  console.log(
    `# Status page: ${count} resources in ${groupCount} groups, 90 days of rollups, ${postedCount} posted incidents; ${rounds} rounds of ${seconds} s per case, ${connections} connections, anonymous, Accept-Encoding: gzip, deflate, br`,
  );
  if (background) console.log(background.describe);
  console.log(
    `page bytes: ${fmt(sizes.br / 1024)} KiB brotli, ${fmt(sizes.gzip / 1024)} KiB gzip, ${fmt(sizes.identity / 1024)} KiB uncompressed; GET /api/resources: ${fmt(json.body.length / 1024)} KiB (not compressed)`,
  );
  console.log(
    `cold render (cache miss: queries, HTML, brotli): first ${fmt(first)} ms (rollups read too), then median ${fmt(cold[2])} ms of 5 (rollups cached; ` +
      `the hour under way read from ${rawPerResource} raw checks per resource)`,
  );
  console.log("case | req/s | client p50/p99 ms | server p50/p99 ms (at most, from the daemon's histogram)");
  type Run = LoadResult & { server: [number, number] };
  const measure = async (path: string, route: string): Promise<Run> => {
    const before = await readBuckets(daemon.url, route);
    const result = await load(daemon.url + path, { seconds, connections, headers });
    const after = await readBuckets(daemon.url, route);
    return { ...result, server: [quantileMs(before, after, 0.5), quantileMs(before, after, 0.99)] };
  };
  const listLimited = (JSON.parse(json.body.toString()) as unknown[]).length <= count + 1;
  if (!listLimited) console.log(`${listPath} answered every resource (no paging in this daemon): the list case is skipped`);
  const runs: Array<{ page: Run; list: Run; file: LoadResult; ratio: number }> = [];
  for (let r = 0; r < rounds; r++) {
    const pageRun = await measure('/status/bench', '/status/{slug}');
    // Without ?limit (a daemon before list paging) the list of every background resource would be measured instead.
    const listRun = listLimited ? await measure(listPath, '/api/resources') : pageRun;
    const fileRun = await load(`${staticUrl}/status/bench`, { seconds, connections, headers });
    runs.push({ page: pageRun, list: listRun, file: fileRun, ratio: pageRun.rps / listRun.rps });
  }
  staticServer.close();
  if (window) console.log(await window.end());
  const median = [...runs].sort((x, y) => x.ratio - y.ratio)[Math.floor(runs.length / 2)];
  const failures = runs.reduce((n, x) => n + x.page.errors + x.page.non2xx, 0);
  console.log(`GET /status/bench | ${fmt(median.page.rps, 0)} | ${median.page.p50}/${median.page.p99} | ${median.page.server.join('/')}`);
  console.log(`GET ${listPath} | ${fmt(median.list.rps, 0)} | ${median.list.p50}/${median.list.p99} | ${median.list.server.join('/')}`);
  console.log(`static file (node:http, the page's brotli bytes) | ${fmt(median.file.rps, 0)} | ${median.file.p50}/${median.file.p99} | -`);
  console.log(
    `ratio page / list: req/s ${fmt(median.ratio, 2)} (rounds: ${runs.map((x) => fmt(x.ratio, 2)).join(' ')}), ` +
      `p99 ${fmt(median.page.p99 / Math.max(1, median.list.p99), 2)}; page / static file: req/s ${fmt(median.page.rps / median.file.rps, 2)}, ` +
      `p99 ${fmt(median.page.p99 / Math.max(1, median.file.p99), 2)}${failures ? `; ${failures} errors or non-2xx on the page` : ''}`,
  );
  const worstP99 = Math.max(...runs.map((x) => x.page.p99));
  const ok = worstP99 < 50 && sizes.br < 60 * 1024 && sizes.gzip < 60 * 1024 && failures === 0;
  console.log(
    `RESULT status: page p99 ${worstP99} ms (target < 50), ${fmt(sizes.br / 1024)} KiB brotli / ${fmt(sizes.gzip / 1024)} KiB gzip (target < 60) ${ok ? 'PASS' : 'MISS'}`,
  );
} finally {
  background?.stop();
  await daemon.stop();
  target.close();
}
