import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, expectProblem, send, until } from '../helpers/http.ts';
import { statusServer } from '../monitoring/helpers.ts';

/**
 * Issue 14, finding 10: `/actuator/prometheus` is public and carried the
 * per-resource series of HIDDEN and AUTHENTICATED resources. Three daemons:
 * the default (`all`, no auth), `--metrics-detail public`, `--metrics-auth key`.
 */
type Kind = 'hidden' | 'authenticated' | 'public' | 'ungrouped';
interface Setup {
  d: TestDaemon;
  ids: Record<Kind, number>;
  userKey: string;
}

async function setUp(args: string[], target: string): Promise<Setup> {
  const d = await startDaemon({ args });
  const group = async (name: string, visibility: 'HIDDEN' | 'AUTHENTICATED' | 'PUBLIC') =>
    (await d.admin.call(operations.createGroup, { body: { name, visibility } })).id;
  const groups = {
    hidden: [await group('HID', 'HIDDEN')],
    authenticated: [await group('AUTH', 'AUTHENTICATED')],
    public: [await group('PUB', 'PUBLIC')],
    ungrouped: [],
  };
  const ids = {} as Record<Kind, number>;
  for (const kind of Object.keys(groups) as Kind[]) {
    const body = { name: kind, resourceType: 'HTTP' as const, target, intervalSeconds: 3600, groupIds: groups[kind] };
    ids[kind] = (await d.admin.call(operations.createResource, { body })).id;
  }
  // A new resource is checked at once; its gauges are set before its history is written.
  for (const id of Object.values(ids)) {
    await until(async () => (await d.admin.call(operations.getResourceHistory, { params: { id } })).length > 0);
  }
  const userKey = (await d.admin.call(operations.createApiKey, { body: { name: 'prometheus', role: 'USER' } })).token;
  return { d, ids, userKey };
}

/** The resource ids that have a `monctl_resource_status` series in a scrape. */
const seriesIds = (text: string) =>
  [...text.matchAll(/^monctl_resource_status\{resource_id="(\d+)"/gm)].map((m) => Number(m[1])).sort((a, b) => a - b);

function promtool(text: string): { status: number | null; output: string } {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (run.error) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('per-resource metrics and resource visibility', () => {
  let web: Awaited<ReturnType<typeof statusServer>>;
  let all: Setup;
  let pub: Setup;
  let keyed: Setup;
  beforeAll(async () => {
    web = await statusServer();
    [all, pub, keyed] = await Promise.all([
      setUp([], `${web.url}/`),
      setUp(['--metrics-detail', 'public'], `${web.url}/`),
      setUp(['--metrics-auth', 'key'], `${web.url}/`),
    ]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([all?.d.stop(), pub?.d.stop(), keyed?.d.stop(), web?.close()]);
  });

  it("all (the default): an anonymous scrape has every resource's series", async () => {
    const res = await send(all.d.url, 'GET', '/actuator/prometheus');
    expect(res.status).toBe(200);
    expect(seriesIds(res.text)).toEqual(Object.values(all.ids).sort((a, b) => a - b));
  });

  it('public: an anonymous scrape has only the series of PUBLIC resources (a PUBLIC group or none)', async () => {
    const res = await send(pub.d.url, 'GET', '/actuator/prometheus');
    expect(res.status).toBe(200);
    expect(seriesIds(res.text)).toEqual([pub.ids.public, pub.ids.ungrouped].sort((a, b) => a - b));
    for (const kind of ['hidden', 'authenticated'] as const) {
      expect(res.text).not.toContain(`resource_id="${pub.ids[kind]}"`);
    }
    // Aggregates stay: the scheduler still counts every check.
    expect(res.text).toMatch(/^monctl_checks_total\{type="HTTP",location="daemon",status="AVAILABLE"\} [4-9]/m);
    expect(promtool(res.text)).toEqual({ status: 0, output: '' });
  });

  it('public: the setting decides, not the caller (an ADMIN scrape is filtered too)', async () => {
    const res = await send(pub.d.url, 'GET', '/actuator/prometheus', { headers: bearer(pub.d.adminKey) });
    expect(seriesIds(res.text)).toEqual([pub.ids.public, pub.ids.ungrouped].sort((a, b) => a - b));
  });

  it('a resource whose group turns PUBLIC shows up in the next scrape', async () => {
    const [hid] = (await pub.d.admin.call(operations.listGroups, {})).filter((g) => g.name === 'HID');
    await pub.d.admin.call(operations.updateGroup, { params: { id: hid.id }, body: { name: 'HID', visibility: 'PUBLIC' } });
    try {
      expect(seriesIds((await send(pub.d.url, 'GET', '/actuator/prometheus')).text)).toContain(pub.ids.hidden);
    } finally {
      await pub.d.admin.call(operations.updateGroup, { params: { id: hid.id }, body: { name: 'HID', visibility: 'HIDDEN' } });
    }
  });

  it('key: 401 without a credential or with a wrong one, 200 with a USER or ADMIN key', async () => {
    const anonymous = await send(keyed.d.url, 'GET', '/actuator/prometheus');
    expectProblem(anonymous, 401);
    expect(anonymous.headers['www-authenticate']).toBe('Bearer');
    expectProblem(await send(keyed.d.url, 'GET', '/actuator/prometheus', { headers: bearer('mk_not-a-valid-key') }), 401);
    for (const key of [keyed.userKey, keyed.d.adminKey]) {
      const res = await send(keyed.d.url, 'GET', '/actuator/prometheus', { headers: bearer(key) });
      expect(res.status).toBe(200);
      expect(seriesIds(res.text)).toEqual(Object.values(keyed.ids).sort((a, b) => a - b));
      expect(promtool(res.text)).toEqual({ status: 0, output: '' });
    }
    // Prometheus's `authorization: { credentials_file }` sends exactly this; X-API-KEY works too.
    expect((await send(keyed.d.url, 'GET', '/actuator/prometheus', { headers: { 'x-api-key': keyed.userKey } })).status).toBe(200);
  });

  it('--print-config shows both settings', async () => {
    const run = spawnSync('bin/monctl', ['daemon', '--print-config', '--metrics-detail', 'public', '--metrics-auth', 'key'], {
      encoding: 'utf8',
    });
    expect(run.stdout).toMatch(/^metricsDetail: public {2}# flag --metrics-detail$/m);
    expect(run.stdout).toMatch(/^metricsAuth: key {2}# flag --metrics-auth$/m);
  });
});
