/**
 * `npm run bench:alerts`: N HTTP resources (default 10,000) checked every
 * `--interval` seconds (default 10) against local targets; then D of them
 * (default 2,000) go down at once. Five receivers (webhook, Slack-compatible,
 * ntfy-compatible, Discord, PagerDuty Events API v2) are routed every
 * INCIDENT_OPENED by one rule with the default group wait; PagerDuty gets one
 * event per alert (its dedup_key is the incident), the others one message. Prints the time from the first failing check of the
 * outage to the last notification accepted by the receivers, the messages
 * each receiver got and the alerts they named, and the daemon's CPU and RSS
 * meanwhile. Target: every notifier reached within groupWait + 5 s of the
 * first failing check, with one message per notifier per group window
 * (PagerDuty: one event per alert in it).
 *
 * Flags: --resources N, --down D, --interval S, --group-wait S.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { startDaemon } from '../test/helpers/daemon.ts';
import { flag, fmt } from './lib/load.ts';
import { cpuMs, memoryMb } from './lib/measure.ts';

/** Child mode: target servers; `POST /__down?below=D` makes paths /r/0 … /r/(D-1) answer 503 from then on. */
async function serveTargets(count: number): Promise<void> {
  const state = { below: 0, firstFailAt: 0, checked: new Set<number>() };
  const ports: number[] = [];
  for (let i = 0; i < count; i++) {
    const server = createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      if (url.pathname === '/__down') {
        state.below = Number(url.searchParams.get('below'));
        return void res.end('{}');
      }
      if (url.pathname === '/__stats') return void res.end(JSON.stringify({ checked: state.checked.size, firstFailAt: state.firstFailAt }));
      const n = Number(url.pathname.split('/')[2]);
      state.checked.add(n);
      if (n < state.below) {
        state.firstFailAt ||= Date.now();
        res.statusCode = 503;
      }
      res.end('ok');
    });
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    ports.push((server.address() as { port: number }).port);
  }
  process.stdout.write(`${JSON.stringify({ ports })}\n`);
}

interface Received {
  kind: string;
  at: number;
  named: number;
}

/** Receivers of the HTTP notifier kinds on one loopback server (by the path's first segment); each request is recorded with when it was accepted. */
async function startReceivers(): Promise<{ url: string; got: Received[]; close: () => Promise<void> }> {
  const got: Received[] = [];
  const body = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let text = '';
      req
        .setEncoding('utf8')
        .on('data', (c) => (text += c))
        .on('end', () => resolve(text));
    });
  const server = createServer(async (req, res) => {
    const text = await body(req);
    const kind = req.url!.split('/')[1];
    let named = 0;
    try {
      const json = JSON.parse(text);
      named = json?.data?.items?.length ?? 0;
    } catch {
      // Slack and ntfy bodies are text for this count.
    }
    got.push({ kind, at: Date.now(), named });
    res.end('{"ok":true}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    got,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const n = flag('resources', 10_000);
  const down = flag('down', 2_000);
  const interval = flag('interval', 10);
  const groupWait = flag('group-wait', 30);
  const children: ChildProcess[] = [];
  const targets = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', import.meta.filename, '--serve-targets', '8'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(targets);
  process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));
  const { ports } = JSON.parse(await new Promise<string>((resolve) => targets.stdout!.once('data', (d) => resolve(String(d)))));
  const control = `http://127.0.0.1:${ports[0]}`;
  const stats = async () => JSON.parse(await (await request(`${control}/__stats`)).body.text()) as { checked: number; firstFailAt: number };
  const receivers = await startReceivers();
  const dataDir = mkdtempSync(join(tmpdir(), 'monctl-bench-alerts-'));
  const daemon = await startDaemon({ env: { MONCTL_CHECK_RESPONSES: '0' }, dataDir: join(dataDir, 'data') });
  children.push(daemon.proc);
  const api = new Agent({ connections: 8 });
  const call = async (method: string, path: string, payload?: unknown) => {
    const res = await request(`${daemon.url}${path}`, {
      method: method as 'POST',
      dispatcher: api,
      headers: { authorization: `Bearer ${daemon.adminKey}`, 'content-type': 'application/json' },
      body: payload === undefined ? undefined : JSON.stringify(payload),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
    return JSON.parse(text);
  };
  console.log(`alerts bench: ${n} HTTP resources every ${interval} s, ${down} go down at once; group wait ${groupWait} s; 5 notifiers`);
  try {
    const notifiers = [
      await call('POST', '/admin/api/notifiers', { name: 'hook', type: 'WEBHOOK', config: { url: `${receivers.url}/webhook` } }),
      await call('POST', '/admin/api/notifiers', { name: 'chat', type: 'SLACK', config: { url: `${receivers.url}/slack` } }),
      await call('POST', '/admin/api/notifiers', { name: 'phone', type: 'NTFY', config: { url: `${receivers.url}/ntfy`, topic: 'ops' } }),
      await call('POST', '/admin/api/notifiers', {
        name: 'discord',
        type: 'DISCORD',
        config: { url: `${receivers.url}/discord/api/webhooks/1/token` },
      }),
      await call('POST', '/admin/api/notifiers', {
        name: 'pager',
        type: 'PAGERDUTY',
        config: { routingKey: 'R'.repeat(32), apiUrl: `${receivers.url}/pagerduty` },
      }),
    ];
    await call('POST', '/admin/api/alert-rules', {
      name: 'everything',
      events: ['INCIDENT_OPENED'],
      notifierIds: notifiers.map((x) => x.id),
      groupWaitSeconds: groupWait,
    });
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < n) {
          const i = next++;
          await call('POST', '/api/resources', {
            name: `bench-${i}`,
            resourceType: 'HTTP',
            target: `http://127.0.0.1:${ports[i % ports.length]}/r/${i}`,
            intervalSeconds: interval,
            failureThreshold: 1,
          });
        }
      }),
    );
    while ((await stats()).checked < n) await sleep(200);
    await sleep(interval * 1000); // a whole interval of steady checks
    const pid = daemon.proc.pid!;
    const cpu0 = cpuMs(pid);
    let maxRss = memoryMb(pid).rss;
    await request(`${control}/__down?below=${down}`, { method: 'POST' }).then((r) => r.body.dump());
    const downAt = Date.now();
    const deadline = downAt + (interval + groupWait + 60) * 1000;
    // One message each, and one PagerDuty event per alert.
    const expected = 4 + down;
    while (Date.now() < deadline) {
      await sleep(500);
      maxRss = Math.max(maxRss, memoryMb(pid).rss);
      if (receivers.got.length >= expected && Date.now() - Math.max(...receivers.got.map((g) => g.at)) > 5000) break;
    }
    const cpu1 = cpuMs(pid);
    const { firstFailAt } = await stats();
    const incidents = await call('GET', '/admin/api/incidents?state=open&limit=1000');
    const lastAt = Math.max(...receivers.got.map((g) => g.at));
    const reach = (lastAt - firstFailAt) / 1000;
    const seconds = (Date.now() - downAt) / 1000;
    console.log(
      `incidents open:          ${Array.isArray(incidents) ? incidents.length : (incidents.items?.length ?? '?')} (first page, at most 1000)`,
    );
    for (const kind of ['webhook', 'slack', 'ntfy', 'discord', 'pagerduty']) {
      const mine = receivers.got.filter((g) => g.kind === kind);
      console.log(
        `${`${kind} ${kind === 'pagerduty' ? 'events' : 'messages'}:`.padEnd(24)} ${mine.length}${kind === 'webhook' ? `, alerts in them: ${mine.reduce((s, g) => s + g.named, 0)}` : ''}${mine.length ? `; last ${fmt((Math.max(...mine.map((g) => g.at)) - firstFailAt) / 1000)} s after the first failing check` : ''}`,
      );
    }
    console.log(`first failing check → last notification accepted: ${fmt(reach)} s (target ≤ group wait + 5 = ${groupWait + 5} s)`);
    console.log(`ratio to the group wait:  ${fmt(reach / groupWait, 3)} (the wait itself is the floor: 1.0 means no delay of ours)`);
    console.log(`daemon CPU:              ${fmt((cpu1.user + cpu1.system - cpu0.user - cpu0.system) / 1000, 2)} s over ${fmt(seconds)} s`);
    console.log(`daemon RSS:              ${fmt(maxRss)} MB max sampled each 0.5 s`);
    console.log(
      `verdict:                 ${reach <= groupWait + 5 && receivers.got.length === expected ? 'met' : 'NOT met'} (messages ${receivers.got.length}, expected ${expected})`,
    );
  } finally {
    await api.close();
    await daemon.stop();
    await receivers.close();
    targets.kill('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--serve-targets')) await serveTargets(flag('serve-targets', 8));
else await main();
