import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { send } from '../helpers/http.ts';
import { startAgent, type TestAgent, until } from '../tunnel/helpers.ts';

/**
 * Issue 14, finding 11: 2,900 bad registration tokens made 2,900 warn lines.
 * Now, past --tunnel-max-refusals bad tokens from one address within the window,
 * every dial from it gets 429 with Retry-After, the log sums refusals up, and
 * the real agent connects once the window has passed.
 */
const MAX = 5;
const DIALS = 300;

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One `GET /admin/tunnel` upgrade on a fresh connection; the whole answer (the daemon closes after a refusal). */
function dial(base: string, token: string): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let raw = '';
    socket.on('data', (c) => {
      raw += c.toString('latin1');
      if (raw.startsWith('HTTP/1.1 101')) socket.destroy(); // accepted: not what this test holds on to
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, body = ''] = raw.split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body });
    });
    socket.write(
      `GET /admin/tunnel HTTP/1.1\r\nHost: ${url.host}\r\nConnection: Upgrade\r\nUpgrade: monctl-tunnel\r\nAuthorization: Bearer ${token}\r\n\r\n`,
    );
  });
}

/** The daemon's log lines about refused dials. */
const refusalLines = (d: TestDaemon) => d.logs.filter((l) => typeof l.msg === 'string' && /^tunnel: .*refused/.test(l.msg));

describe('refused agent dials are limited per source and logged in summary', () => {
  let d: TestDaemon;
  let dir: string;
  let token: string;
  let agentId: number;
  let agent: TestAgent | undefined;
  const answers: Answer[] = [];
  beforeAll(async () => {
    d = await startDaemon({ args: ['--tunnel-max-refusals', String(MAX), '--tunnel-refusal-window', '4s'] });
    dir = mkdtempSync(join(tmpdir(), 'monctl-dial-limit-'));
    agentId = (await d.admin.call(operations.createAgent, { body: { name: 'office' } })).id;
    token = (await d.admin.call(operations.rotateAgentToken, { params: { id: agentId } })).token;
    // The hammer: bad tokens, 10 connections at a time, all from 127.0.0.1.
    for (let i = 0; i < DIALS; i += 10) {
      answers.push(
        ...(await Promise.all(Array.from({ length: 10 }, (_, j) => dial(d.url, `mta_guess${String(i + j).padStart(30, '0')}`)))),
      );
    }
  }, 60_000);
  afterAll(async () => {
    await agent?.stop('SIGKILL');
    await d?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`answers 401 to the first ${MAX} bad tokens, then 429 with Retry-After (problem+json)`, () => {
    expect(answers.filter((a) => a.status === 401)).toHaveLength(MAX);
    const limited = answers.filter((a) => a.status === 429);
    expect(limited).toHaveLength(DIALS - MAX);
    for (const a of limited) {
      expect(a.headers['retry-after']).toMatch(/^[1-9]\d*$/);
      expect(a.headers['content-type']).toBe('application/problem+json');
      expect(JSON.parse(a.body)).toMatchObject({ status: 429, instance: '/admin/tunnel' });
    }
  });

  it('refuses a valid token from the limited address too (no oracle)', async () => {
    const a = await dial(d.url, token);
    expect(a.status).toBe(429);
  });

  it('logs refusals in summary: a few lines, not one per dial', async () => {
    // Wait for the summaries to account for the hammer (the first line of an interval may stand alone).
    const summed = () =>
      refusalLines(d)
        .filter((l) => typeof l.seconds === 'number')
        .reduce((n, l) => n + Number(l.badToken) + Number(l.rateLimited), 0);
    await until(() => summed() >= DIALS || refusalLines(d).length > 6);
    const lines = refusalLines(d);
    expect(lines.length).toBeLessThanOrEqual(6);
    expect(lines[0]).toMatchObject({ level: 40, remoteAddress: '127.0.0.1', source: '127.0.0.1' });
    expect(
      lines.some((l) =>
        /^tunnel: refused \d+ agent dials from 127\.0\.0\.1 in the last 4 s \(bad token: \d+, rate limited: \d+\)$/.test(String(l.msg)),
      ),
    ).toBe(true);
  });

  it('counts refusals by reason in monctl_tunnel_dials_refused_total', async () => {
    const text = (await send(d.url, 'GET', '/actuator/prometheus')).text;
    expect(text).toMatch(new RegExp(`^monctl_tunnel_dials_refused_total\\{reason="bad_token"\\} ${MAX}$`, 'm'));
    const limited = Number(/^monctl_tunnel_dials_refused_total\{reason="rate_limited"\} (\d+)$/m.exec(text)?.[1]);
    expect(limited).toBeGreaterThanOrEqual(DIALS - MAX + 1);
    expect(text).toMatch(/^monctl_tunnel_dials_refused_total\{reason="draining"\} 0$/m);
  });

  it('the real agent, refused with 429 while its address is limited, connects once the window has passed', async () => {
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    // A fresh window, filled at once: the address is then limited for the whole window (4 s), well
    // past the agent's first dial. Letting the earlier refusals expire first keeps one of them from
    // freeing a slot just as the agent dials.
    await new Promise((r) => setTimeout(r, 4_500));
    for (let i = 0; i < MAX; i++) expect((await dial(d.url, 'mta_still-guessing-000000000000000')).status).toBe(401);
    expect((await dial(d.url, 'mta_still-guessing-000000000000000')).status).toBe(429);
    agent = startAgent(d.url, tokenFile);
    const sawLimit = () => agent!.logs.some((l) => l.msg === 'tunnel: dial failed' && l.status === 429);
    const connected = () => agent!.logs.some((l) => l.msg === 'tunnel: connected');
    await until(() => sawLimit() || connected(), 50);
    expect(sawLimit()).toBe(true);
    // No more guessing: the window passes and the agent's next try (backoff of at most 30 s) gets through.
    await until(async () => (await d.admin.call(operations.getAgent, { params: { id: agentId } })).status === 'CONNECTED', 100);
    expect(agent.proc.exitCode).toBeNull();
  }, 60_000);
});
