import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Bus } from '../../daemon/bus.ts';
import { defaultDaemonConfig } from '../../daemon/config/daemon-config.ts';
import { EventHub } from '../../daemon/events/channel.ts';
import { createLogger } from '../../daemon/logger.ts';
import { type RunningServices, startServices } from '../../daemon/services.ts';
import { openStore, type OpenedStore } from '../../daemon/store/store.ts';
import { ROOT } from '../helpers/daemon.ts';

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourcesUnder(path) : /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** `file:line: text` of every line of daemon/ (outside `except`) that matches. */
function linesMatching(pattern: RegExp, except?: string): string[] {
  return sourcesUnder(join(ROOT, 'daemon')).flatMap((file) => {
    const name = relative(ROOT, file);
    if (except && name.startsWith(except)) return [];
    return readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) => (pattern.test(line) ? [`${name}:${i + 1}: ${line.trim()}`] : []));
  });
}

/**
 * The shared services are built once by the composition root (daemon.ts,
 * through daemon/services.ts) and reach the modules on the context; no module
 * creates one for the others on first use.
 */
describe('shared services', () => {
  let dir: string;
  let store: OpenedStore;
  let running: RunningServices;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'monctl-services-'));
    store = await openStore(dir);
    const config = defaultDaemonConfig({ podName: 'services-test', dataDir: dir });
    running = await startServices({
      config,
      db: store.db,
      log: createLogger('silent'),
      bus: new Bus(),
      events: new EventHub(),
      installSecret: new Uint8Array(32).fill(1),
    });
  });
  afterAll(async () => {
    await running?.stop();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('no module keeps a service per daemon context (a WeakMap<DaemonContext, …> created by its first caller)', () => {
    expect(linesMatching(/(Weak)?Map<\s*DaemonContext\b/)).toEqual([]);
  });

  it('builds each service before the modules: the pod is named, the maintenance windows are read', async () => {
    const { services } = running;
    expect(services.pod.name).toBe('services-test');
    expect(() => services.pod.id).toThrow('pod not registered yet');
    await store.db
      .insertInto('maintenance_windows')
      .values({
        name: 'later',
        kind: 'ONE_OFF',
        starts_at: Date.now() + 60_000,
        ends_at: Date.now() + 120_000,
        resource_ids: '[1]',
        group_ids: '[]',
        agent_ids: '[]',
        created_at: Date.now(),
        updated_at: Date.now(),
      })
      .execute();
    expect(services.maintenance.windows).toEqual([]); // read once at start, before the window existed
    await services.maintenance.reload();
    expect(services.maintenance.windows.map((w) => w.name)).toEqual(['later']);
  });

  it('stops them: the route log takes no more entries', async () => {
    await running.stop();
    const { routeLog } = running.services;
    const before = routeLog.dropped;
    routeLog.append({
      routeId: 1,
      method: 'GET',
      path: '/',
      status: 200,
      durationMs: 1,
      bytesIn: 0,
      bytesOut: 0,
      clientIp: null,
      agentId: null,
      podId: null,
      error: null,
    });
    expect(routeLog.dropped).toBe(before + 1);
  });
});

/** Every default is the settings table's (daemon/config/settings.ts); modules get the config with every such field present. */
describe('defaults', () => {
  it('the config modules get has every setting with a default present; only unset optional ones are absent', () => {
    const config = defaultDaemonConfig();
    const absent: string[] = [];
    const walk = (value: unknown, path: string) => {
      if (value === undefined) absent.push(path);
      else if (value && typeof value === 'object' && !Array.isArray(value))
        for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
    };
    walk(config, '');
    expect(absent.sort()).toEqual(['adminPassword', 'databaseUrl', 'podName', 'publicUrl']);
  });

  it('no module applies a default of its own to a setting that has one in the table', () => {
    const config = defaultDaemonConfig();
    const withDefault = Object.keys(config).filter((key) => config[key as keyof typeof config] !== undefined);
    const ownDefault = new RegExp(`config\\??\\.(${withDefault.join('|')})\\b(\\??\\.\\w+)*\\s*\\?\\?`);
    expect(linesMatching(ownDefault, 'daemon/config/')).toEqual([]);
  });
});
