/**
 * Child process: T plain HTTP target servers for benches that check many
 * resources beside what they measure (bench:status's background, bench:pods).
 * Paths under `/flap/` answer 503 on every other request (a status change per
 * check); the rest answer 200. `GET /__stats` on any port tells the requests
 * so far, the distinct paths, and, per path, the checks that came less than
 * half an interval after the previous one (`early`: checked twice, by two pods
 * say) or more than one and a half intervals after it (`late`: a check missed).
 *
 *   node bench/lib/check-targets.ts <targets> <interval seconds>
 *
 * Prints `{"ports":[...]}` on its first line once listening.
 */
import { createServer } from 'node:http';

export interface TargetStats {
  total: number;
  distinct: number;
  early: number;
  late: number;
}

const count = Number(process.argv[2] ?? 8);
const intervalMs = Number(process.argv[3] ?? 300) * 1000;
const stats: TargetStats = { total: 0, distinct: 0, early: 0, late: 0 };
/** Per path: the last check's time (ms, truncated to a 32-bit offset from the start) and, for flapping ones, the next answer. */
const last = new Map<string, number>();
const flapDown = new Set<string>();
const t0 = Date.now();
const ports: number[] = [];
for (let i = 0; i < count; i++) {
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/__stats') return void res.end(JSON.stringify(stats));
    const now = Date.now() - t0;
    stats.total++;
    const before = last.get(url);
    if (before === undefined) stats.distinct++;
    else if (now - before < intervalMs / 2) stats.early++;
    else if (now - before > intervalMs * 1.5) stats.late++;
    last.set(url, now);
    let code = 200;
    if (url.startsWith('/flap/')) {
      if (flapDown.delete(url)) code = 503;
      else flapDown.add(url);
    }
    res.writeHead(code).end('ok');
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  ports.push((server.address() as { port: number }).port);
}
process.stdout.write(`${JSON.stringify({ ports })}\n`);
