import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { send, until } from '../helpers/http.ts';

/**
 * A protocol check type everywhere a type goes (docs/API.md#check-types), end to end through a
 * real daemon with a real UDP echo server on loopback: the check's verdict and its own errorCode in
 * the history, an incident that opens and closes, the public status page and its summary, the
 * status badge, the public resource reads, and the metrics by type.
 */
let d: TestDaemon;
let echo: Socket;
let silent = false;
let port = 0;

beforeAll(async () => {
  echo = createSocket('udp4');
  echo.on('message', (msg, from) => {
    if (!silent) echo.send(msg, from.port, from.address);
  });
  await new Promise<void>((r) => echo.bind(0, '127.0.0.1', r));
  port = echo.address().port;
  d = await startDaemon();
});
afterAll(async () => {
  await d?.stop();
  await new Promise<void>((r) => (echo ? echo.close(() => r()) : r()));
});

const get = (path: string, headers: Record<string, string> = {}) => send(d.url, 'GET', path, { headers });

describe('a UDP resource everywhere a type goes', () => {
  it('history, incident, status page, badge, public reads and metrics', async () => {
    const a = d.admin;
    const group = await a.call(operations.createGroup, { body: { name: 'Public', visibility: 'PUBLIC' } });
    await a.call(operations.createStatusPage, { body: { slug: 'main', title: 'Main', groupIds: [group.id] } });
    const created = await a.call(operations.createResource, {
      body: {
        name: 'echo',
        resourceType: 'UDP',
        target: `127.0.0.1:${port}`,
        udp: { send: '70696e67', sendEncoding: 'hex' },
        conditions: ['[BODY] == ping'],
        intervalSeconds: 3600,
        failureThreshold: 1,
        timeoutSeconds: 1,
        groupIds: [group.id],
      },
    });
    // The scheduler's first check (a new resource is due at once) reads the stored options too.
    await until(async () => (await a.call(operations.getAdminResource, { params: { id: created.id } })).latestCheckedAt !== null);
    expect(await a.call(operations.getAdminResource, { params: { id: created.id } })).toMatchObject({ latestCheckStatus: 'AVAILABLE' });
    const check = () => a.call(operations.checkResource, { params: { id: created.id } });
    expect(await check()).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    // The test endpoint checks the same body without storing it, with the same verdict and a report.
    const tested = await a.call(operations.testResource, {
      body: { resourceType: 'UDP', target: `127.0.0.1:${port}`, udp: { send: 'ping' }, conditions: ['[BODY] == ping'] },
    });
    expect(tested).toMatchObject({ status: 'AVAILABLE', report: { conditions: [{ condition: '[BODY] == ping', ok: true }] } });

    const upBadge = await get(`/api/badges/${created.id}/status.svg`);
    expect(upBadge.status).toBe(200);
    expect(upBadge.text).toContain('<title>status: up</title>');
    const upPage: any = (await get('/api/status-pages/main/summary')).json();
    expect(JSON.stringify(upPage)).toContain('"echo"');
    expect(upPage.overall.state).toBe('OPERATIONAL');
    const pub: any = (await get(`/api/resources/${created.id}`)).json();
    expect(pub).toMatchObject({ resourceType: 'UDP', currentStatus: 'available' });
    expect(pub.udp).toBeUndefined(); // options are for the admin views only

    silent = true;
    expect(await check()).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'NO_RESPONSE' });
    const downBadge = await get(`/api/badges/${created.id}/status.svg`);
    expect(downBadge.text).toContain('<title>status: down</title>');
    // The page says the type's own cause in public words (src/probes/public-cause.ts), never the target.
    const downPage: any = (await get('/api/status-pages/main/summary')).json();
    expect(downPage.overall.state).toBe('MAJOR_OUTAGE');
    expect(downPage.incidents).toMatchObject([{ resourceName: 'echo', errorCode: 'NO_RESPONSE', cause: 'no response' }]);
    const incidents: any = await a.call(operations.listIncidents, { query: {} } as never);
    const open = (incidents.items ?? incidents).filter((i: any) => i.resourceId === created.id);
    expect(open.length).toBe(1);
    expect(open[0]).toMatchObject({ resourceId: created.id });

    silent = false;
    expect(await check()).toMatchObject({ status: 'AVAILABLE' });
    const history: any = await a.call(operations.getResourceHistory, { params: { id: created.id }, query: {} } as never);
    expect((history.items ?? history).map((h: any) => h.errorCode)).toEqual(expect.arrayContaining([null, 'NO_RESPONSE']));

    const metrics = (await get('/actuator/prometheus', { authorization: `Bearer ${d.adminKey}` })).text;
    expect(metrics).toMatch(new RegExp(`monctl_resource_status\\{[^}]*resource_id="${created.id}"[^}]*type="UDP"`));
    expect(metrics).toMatch(/monctl_check_duration_seconds_count\{[^}]*type="UDP"/);
  });
});
