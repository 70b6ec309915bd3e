import { constants as h2 } from 'node:http2';
import { operations } from '../../src/api/operations.ts';
import { stalledH2Streams } from '../../test/tunnel/h2-stalled.ts';
import { makePki } from '../../test/helpers/tls.ts';
import { fmt } from './load.ts';
import { treeMemoryMb } from './procs.ts';
import type { MonctlTunnel } from './tunnel-monctl.ts';

const SESSIONS = 8;
const STREAMS = 128;
const HOST = 'h2-stalled.test';
const CODE_NAMES: Record<number, string> = {
  [h2.NGHTTP2_NO_ERROR]: 'NO_ERROR',
  [h2.NGHTTP2_CANCEL]: 'CANCEL',
  [h2.NGHTTP2_ENHANCE_YOUR_CALM]: 'ENHANCE_YOUR_CALM',
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The HTTP/2 slow-reader attack of issue 25 against monctl's HTTPS edge: 8
 * sessions announce a zero receive window, open 128 streams each to a route
 * answering 1 MiB, never read and ping every second. Measured against the
 * daemon's idle RSS just before (same run): its peak RSS meanwhile, and how
 * long after their response headers the streams were reset, against the
 * daemon's --slow-reader-window (`windowMs`).
 */
export async function h2SlowReaderAttack(monctl: MonctlTunnel, target: string, windowMs: number): Promise<string[]> {
  const pki = makePki('bench h2 slow readers CA');
  try {
    const pair = pki.issueNames('h2-stalled', 2, [HOST]);
    await monctl.admin.call(operations.uploadCertificate, { body: { certificate: pair.cert, privateKey: pair.key } });
    await monctl.admin.call(operations.createRoute, {
      body: { name: 'h2-stalled', type: 'HTTP', agentId: monctl.agentId, target, hostname: HOST },
    });
    await sleep(1000);
    const daemon = [monctl.daemonPid];
    const idle = treeMemoryMb(daemon).rss;
    let peak = idle;
    const sampler = setInterval(() => {
      peak = Math.max(peak, treeMemoryMb(daemon).rss);
    }, 100);
    const total = SESSIONS * STREAMS;
    const started = Date.now();
    const attack = await stalledH2Streams(monctl.edgeTls, {
      ca: pki.ca,
      servername: HOST,
      path: '/mib',
      sessions: SESSIONS,
      streams: STREAMS,
    });
    try {
      const deadline = started + windowMs * 2 + 30_000;
      while (attack.resets.length < total && Date.now() < deadline) await sleep(100);
    } finally {
      clearInterval(sampler);
      attack.close();
    }
    const after = attack.resets.map((r) => r.afterMs).sort((a, b) => a - b);
    const at = (q: number) => (after.length ? fmt(after[Math.min(after.length - 1, Math.floor(after.length * q))] / 1000, 1) : '-');
    const agent = treeMemoryMb([monctl.agentPid]).rss;
    const codes = Object.entries(Object.groupBy(attack.resets, (r) => CODE_NAMES[r.code] ?? String(r.code)))
      .map(([k, v]) => `${v!.length} ${k}`)
      .join(', ');
    return [
      `monctl: ${attack.answered}/${total} streams answered, ${after.length} reset (${codes || 'none'}); GOAWAY codes ${attack.goaways.join(', ') || 'none'}`,
      `  reset after their headers: p50 ${at(0.5)} s, max ${at(1)} s (--slow-reader-window ${fmt(windowMs / 1000, 0)} s); ` +
        `${Math.round((Date.now() - started) / 1000)} s in all`,
      `  daemon RSS: idle ${fmt(idle)} MB, peak ${fmt(peak)} MB (${fmt(peak / idle, 2)}× idle, +${fmt(((peak - idle) / total) * 1024, 0)} KB per stream); agent ${fmt(agent)} MB after` +
        `; peak < 400 MB: ${peak < 400 ? 'PASS' : 'MISS'}`,
    ];
  } finally {
    pki.cleanup();
  }
}
