import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { until } from '../helpers/http.ts';

/**
 * Graceful shutdown (docs/DECISIONS.md): while draining, in-flight requests
 * finish and `/actuator/health` answers 503 {"status":"DOWN"}. New connections
 * are refused once draining starts, so health is asked on a connection that
 * was busy when the signal came: the request behind an in-flight one.
 */
describe('graceful shutdown', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon();
  });
  afterAll(async () => {
    await d?.stop();
  });

  it('finishes an in-flight request and reports DOWN while draining, then exits 0', async () => {
    const socket = connect(Number(new URL(d.url).port), '127.0.0.1');
    let out = '';
    socket.on('data', (c) => (out += c));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    // `Expect: 100-continue` makes the daemon say when it holds the request: no sleep needed.
    socket.write(
      `POST /admin/api/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${d.adminKey}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 19\r\nExpect: 100-continue\r\n\r\n',
    );
    await until(() => out.includes('100 Continue'));

    const exited = d.stop('SIGTERM');
    await until(() => d.logs.some((l) => l.msg === 'draining'));
    socket.write(`{"name":"in-fligh"}GET /actuator/health HTTP/1.1\r\nHost: x\r\n\r\n`);
    await until(() => out.includes('"status":"DOWN"') || socket.destroyed);
    socket.end();
    await closed;

    const responses = out.split(/(?=HTTP\/1\.1 )/).filter((r) => !r.startsWith('HTTP/1.1 100'));
    expect(responses).toHaveLength(2);
    expect(responses[0]).toMatch(/^HTTP\/1\.1 200 /);
    expect(responses[0]).toContain('"name":"in-fligh"');
    expect(responses[1]).toMatch(/^HTTP\/1\.1 503 /);
    // On PostgreSQL the body also names the database (`components.db`).
    expect(responses[1]).toMatch(/\{"status":"DOWN"[,}]/);
    expect(await exited).toBe(0);
    expect(d.logs.map((l) => l.msg).at(-1)).toBe('stopped');
  });
});
