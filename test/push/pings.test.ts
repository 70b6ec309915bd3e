import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { MAX_PING_BODY_BYTES } from '../../src/api/schemas/push.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { createPush, historyOf, ping } from './helpers.ts';

// The ping endpoints end to end (docs/API.md#push-checks): every kind on the API listener and on
// the edge (a host with a tunnel route and one without), key and slug, ?create=1, bodies kept and
// cut, a run's duration and the conditions that read it. One daemon for the file, with the test
// clock so that a run can last minutes without waiting for them.
let d: TestDaemon;

beforeAll(async () => {
  d = await startDaemon({ args: ['--test-clock', 'on'] });
});

afterAll(async () => {
  await d?.stop();
});

async function admin(method: string, path: string, body?: unknown): Promise<any> {
  const res = await d.admin.raw(method, path, body === undefined ? undefined : JSON.stringify(body));
  return res.text === '' ? undefined : JSON.parse(res.text);
}

const detail = (id: number) => d.admin.call(operations.getResource, { params: { id } });

describe('ping kinds', () => {
  for (const [listener, host] of [
    ['API', undefined],
    ['edge', undefined],
    ['edge, a host with a tunnel route', 'jobs.route.test'],
  ] as const) {
    it(`records each kind on the ${listener}`, async () => {
      const base = listener === 'API' ? d.url : d.edgeUrl;
      const headers = { 'user-agent': 'cron-job/1.0', ...(host ? { host } : {}) };
      if (host) {
        // A route for this host: its traffic goes to an agent, but /ping stays monctl's.
        const agent = await d.admin.call(operations.createAgent, { body: { name: 'jobs-agent' } });
        await d.admin.call(operations.createRoute, {
          body: { name: 'jobs', type: 'HTTP', agentId: agent.id, target: 'http://127.0.0.1:9', hostname: host },
        });
        expect((await ping(base, '/other', { headers })).status).not.toBe(200);
      }
      const r = await createPush(d, `kinds ${listener}`);
      const url = `/ping/${r.uuid}`;
      const start = await ping(base, `${url}/start`, { method: 'HEAD', headers });
      expect([start.status, start.text]).toEqual([200, '']);
      const log = await ping(base, `${url}/log`, { method: 'POST', body: 'halfway', headers });
      expect([log.status, log.text, log.headers['content-type']]).toEqual([200, 'OK\n', 'text/plain; charset=utf-8']);
      expect((await ping(base, `${url}/fail`, { method: 'POST', body: 'disk full', headers })).status).toBe(200);
      expect((await detail(r.id)).currentStatus).toBe('not_available');
      expect((await ping(base, `${url.toUpperCase().replace('/PING/', '/ping/')}/0`, { headers })).status).toBe(200);
      expect((await ping(base, url, { headers })).status).toBe(200);
      const status = await detail(r.id);
      expect(status.currentStatus).toBe('available');

      const entries = (await historyOf(d, r.id)).reverse();
      expect(entries.map((e) => [e.ping.kind, e.ping.exitCode, e.status, e.errorCode])).toEqual([
        ['start', null, 'AVAILABLE', null],
        ['log', null, 'AVAILABLE', null],
        ['fail', null, 'NOT_AVAILABLE', 'FAILED_RUN'],
        ['success', 0, 'AVAILABLE', null],
        ['success', null, 'AVAILABLE', null],
      ]);
      expect(entries[1].ping).toMatchObject({
        sourceIp: '127.0.0.1',
        userAgent: 'cron-job/1.0',
        body: 'halfway',
        bodyBytes: 7,
        bodyTruncated: false,
      });
      expect(entries[2].message).toBe('the run failed');
      expect(entries[0].ping.body).toBeNull();
      // The fail finished the run the start began: its duration is recorded.
      expect(entries[2].ping.runMs).toEqual(expect.any(Number));
      expect(entries[3].ping.runMs).toBeNull();
    });
  }

  it('records exit code 3 as a failed run naming it', async () => {
    const r = await createPush(d, 'exit three');
    expect((await ping(d.url, `/ping/${r.uuid}/3`)).status).toBe(200);
    const [entry] = await historyOf(d, r.id);
    expect(entry).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'FAILED_RUN', message: 'the run exited with code 3' });
    expect(entry.ping).toMatchObject({ kind: 'fail', exitCode: 3 });
    expect(await detail(r.id)).toMatchObject({ currentStatus: 'not_available', latestCheckStatus: 'NOT_AVAILABLE' });
  });

  it('answers 404 for an unknown uuid, logged below info', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    const res = await ping(d.edgeUrl, `/ping/${unknown}`);
    expect(res.status).toBe(404);
    expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
    expect(d.logs.filter((l) => JSON.stringify(l).includes(unknown))).toEqual([]);
  });

  it('moves the deadline and tells the push view', async () => {
    const r = await createPush(d, 'deadline moves');
    await ping(d.url, `/ping/${r.uuid}/start`);
    let view = ((await d.admin.call(operations.getAdminResource, { params: { id: r.id } })) as any).push;
    expect(view.startedAt).not.toBeNull();
    await ping(d.url, `/ping/${r.uuid}`);
    view = ((await d.admin.call(operations.getAdminResource, { params: { id: r.id } })) as any).push;
    expect(view).toMatchObject({ startedAt: null, lastPingKind: 'success', lastPingAt: expect.any(String), lateAt: expect.any(String) });
  });
});

describe('runs and conditions', () => {
  it('records the run from start to success, which [RESPONSE_TIME] reads', async () => {
    const r = await createPush(d, 'timed run', { conditions: ['[RESPONSE_TIME] < 60000'] });
    // Without a start the run has no duration: [RESPONSE_TIME] is 0 and the condition holds.
    expect((await ping(d.url, `/ping/${r.uuid}`)).status).toBe(200);
    expect((await detail(r.id)).currentStatus).toBe('available');
    await ping(d.url, `/ping/${r.uuid}/start`);
    await admin('POST', '/admin/api/test-clock', { advanceSeconds: 300 });
    await ping(d.url, `/ping/${r.uuid}`);
    const [entry] = await historyOf(d, r.id);
    expect(entry.ping.runMs).toBeGreaterThanOrEqual(300_000);
    expect(entry.durationMs).toBe(entry.ping.runMs);
    expect(entry).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED' });
    expect(entry.message).toContain('[RESPONSE_TIME]');
  });

  it('judges [BODY] on the body sent', async () => {
    const r = await createPush(d, 'body condition', { conditions: ['[BODY] == pat(*backup ok*)'] });
    await ping(d.url, `/ping/${r.uuid}`, { method: 'POST', body: 'backup ok: 3 files' });
    expect((await detail(r.id)).currentStatus).toBe('available');
    await ping(d.url, `/ping/${r.uuid}`, { method: 'POST', body: 'backup skipped' });
    expect((await detail(r.id)).currentStatus).toBe('not_available');
  });
});

describe('bodies', () => {
  it('keeps a body whole, or its first 100 KiB and says it was cut', async () => {
    const r = await createPush(d, 'bodies');
    const small = 'line one\nline two ünïcödé\n';
    await ping(d.url, `/ping/${r.uuid}`, { method: 'POST', body: small });
    const long = Buffer.alloc(MAX_PING_BODY_BYTES + 50_000, 'x');
    long.write('FIRST', 0);
    await ping(d.edgeUrl, `/ping/${r.uuid}/log`, { method: 'POST', body: long });
    await ping(d.url, `/ping/${r.uuid}/start`);
    const [none, cut, whole] = await historyOf(d, r.id);
    expect(whole.ping).toMatchObject({ bodyBytes: Buffer.byteLength(small), bodyTruncated: false, body: small });
    expect(cut.ping).toMatchObject({ bodyBytes: MAX_PING_BODY_BYTES, bodyTruncated: true });
    expect(cut.ping.body).toHaveLength(1024); // the list shows a preview

    const bodyOf = (id: number, historyId: number) => d.admin.raw('GET', `/admin/api/resources/${id}/history/${historyId}/body`);
    const got = await bodyOf(r.id, whole.id);
    expect(got.text).toBe(small);
    expect(got.headers['content-type']).toBe('text/plain; charset=utf-8');
    const kept = (await bodyOf(r.id, cut.id)).text;
    expect(kept).toHaveLength(MAX_PING_BODY_BYTES);
    expect(kept.startsWith('FIRST')).toBe(true);
    // No body, another resource's entry, or no credential: nothing.
    await expect(bodyOf(r.id, none.id)).rejects.toMatchObject({ status: 404 });
    const other = await createPush(d, 'bodies other');
    await expect(bodyOf(other.id, whole.id)).rejects.toMatchObject({ status: 404 });
    await expect(d.client().raw('GET', `/admin/api/resources/${r.id}/history/${whole.id}/body`)).rejects.toMatchObject({ status: 401 });
  });
});

describe('ping keys', () => {
  it('pings by key and slug, and creates with ?create=1 only where the key allows it', async () => {
    const key = await admin('POST', '/admin/api/ping-keys', { allowCreate: true });
    const r = await createPush(d, 'Nightly Backup');
    expect(r.slug).toBe('nightly-backup');
    expect((await ping(d.edgeUrl, `/ping/${key.key}/nightly-backup/start`)).status).toBe(200);
    expect((await ping(d.url, `/ping/${key.key}/nightly-backup`)).status).toBe(200);
    expect((await historyOf(d, r.id)).map((e) => e.ping.kind)).toEqual(['success', 'start']);

    expect((await ping(d.url, `/ping/${key.key}/brand-new-job`)).status).toBe(404);
    expect((await ping(d.url, `/ping/${key.key}/brand-new-job?create=1`)).status).toBe(200);
    const made = ((await d.admin.call(operations.listAdminResources)) as any[]).find((x) => x.target === 'brand-new-job');
    expect(made).toMatchObject({ resourceType: 'PUSH' });
    expect((await historyOf(d, made.id)).map((e) => e.ping.kind)).toEqual(['success']);
    expect((await ping(d.url, '/ping/NoSuchKeyAtAll1234/brand-new-job')).status).toBe(404);
  });

  it("reaches only its group's checks with a group's key, and creates nothing without allowCreate", async () => {
    const group = await admin('POST', '/admin/api/groups', { name: 'ci', visibility: 'PUBLIC' });
    const key = await admin('POST', '/admin/api/ping-keys', { groupId: group.id });
    const inside = await createPush(d, 'ci deploy', { groupIds: [group.id] });
    const outside = await createPush(d, 'not ci');
    expect((await ping(d.url, `/ping/${key.key}/${inside.slug}`)).status).toBe(200);
    expect((await ping(d.url, `/ping/${key.key}/${outside.slug}`)).status).toBe(404);
    expect((await ping(d.url, `/ping/${key.key}/never-made?create=1`)).status).toBe(404);
  });
});
