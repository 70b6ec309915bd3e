import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { circles, filesUnder, importGraph, importsOf, type Layers, unplaced, upwardImports } from './helpers/import-graph.ts';
import { ROOT } from './helpers/daemon.ts';

const daemon = (names: string) => names.split(' ').map((name) => `daemon/${name}`);

/**
 * The dependency order, bottom first (docs/DECISIONS.md, "Dependency order"). A file imports only
 * lower layers and its own folder; a folder listed with a file prefix is split, and the longest
 * prefix places a file.
 */
export const LAYERS: Layers = [
  ['src'], // shared by the daemon and the CLI
  // Infrastructure.
  daemon('util logger'),
  daemon('bus store'),
  daemon('config'), // config.ts and config/: the settings table owns the defaults it declares
  daemon('metrics events'),
  daemon('http'),
  daemon('auth'), // keys, sessions, passwords, principals: who is asking
  daemon('cluster'), // pods: messages, the event relay, shard leases
  daemon('auth/stream-guard.ts tunnel-control.ts'), // what the context holds that needs cluster/
  daemon('context.ts'),
  // The request path over the context.
  daemon('http/bind.ts'),
  daemon('module.ts'),
  daemon('http/app.ts'),
  // Capabilities.
  daemon(
    'auth/index.ts auth/bootstrap.ts auth/login-routes.ts auth/keys.ts auth/users.ts auth/reset-admin.ts auth/oidc/login-routes.ts auth/oidc/cli-routes.ts auth/oidc/cli-key.ts auth/oidc/device-grant.ts auth/two-factor/routes.ts auth/two-factor/handlers.ts auth/two-factor/login-step.ts auth/login-session.ts',
  ), // auth's API
  // The incident engine runs inside the transaction that records check results, so incidents, the
  // maintenance windows that mute them and the alert outbox sit under probes; the rest of alerts
  // (rules, routing, notifiers, delivery) reads them from above monitoring.
  daemon('alerts/incidents alerts/agents alerts/maintenance alerts/alert-events.ts alerts/types.ts'),
  daemon('push/schedule.ts push/types.ts'), // push deadlines, which creating a PUSH resource sets too
  daemon('probes'),
  // Push checks' records (push_checks, ping keys, schedules): what the monitoring API writes and reads.
  daemon('push/schedule.ts push/types.ts push/store'),
  daemon('monitoring certs'),
  daemon('push'), // the ping endpoints, the deadline judge and the ping keys' API, over the resources API
  daemon('tunnel-admin'), // the records of agents, routes and pods, which the edge serves
  daemon('tunnel alerts'),
  daemon('push'), // pings (they read the client address as the edge does) and the deadline judge
  daemon('status'),
  daemon('docs'),
  daemon('system'),
  daemon('backup'), // copies of the SQLite store: the scheduled module and the backup/restore commands
  // The composition root and the commands around it.
  daemon('modules.ts services.ts'), // services.ts builds what several capabilities share
  daemon('daemon.ts'),
  daemon('command.ts'),
  ['cli'], // talks to the daemon over HTTP, through src/ only
];

const SOURCE_TOPS = ['daemon', 'cli', 'src'];
const sourceGraph = () => importGraph(SOURCE_TOPS.flatMap((top) => filesUnder(join(ROOT, top))));

/** Files under `from` that import anything under one of `forbidden` (top-level folders). */
export function violations(
  from: string,
  forbidden: string[],
  read = (f: string) => readFileSync(f, 'utf8'),
  files = filesUnder(join(ROOT, from)),
) {
  const bad: string[] = [];
  for (const file of files) {
    for (const spec of importsOf(read(file))) {
      if (!spec.startsWith('.')) continue;
      const target = relative(ROOT, resolve(dirname(file), spec));
      if (forbidden.some((top) => target === top || target.startsWith(`${top}/`))) bad.push(`${relative(ROOT, file)} -> ${spec}`);
    }
  }
  return bad;
}

describe('layering', () => {
  it('cli/ never imports daemon/ (it talks HTTP through src/)', () => {
    expect(violations('cli', ['daemon'])).toEqual([]);
  });

  it('src/ is shared by both sides and imports neither', () => {
    expect(violations('src', ['daemon', 'cli'])).toEqual([]);
  });

  it('the check sees every import form, so it can fail', () => {
    const file = join(ROOT, 'cli/fake/bad.ts');
    const sources = [
      "import { x } from '../../daemon/http/app.ts';",
      "export * from '../../daemon/store/store.ts';",
      "const m = await import('../../daemon/daemon.ts');",
      "import '../../daemon/logger.ts';",
    ];
    for (const source of sources) expect(violations('cli', ['daemon'], () => source, [file])).toHaveLength(1);
    expect(violations('cli', ['daemon'], () => "import { y } from '../../src/errors.ts';", [file])).toEqual([]);
  });
});

describe('dependency order', () => {
  const graph = sourceGraph();

  it('places every source file in the order', () => {
    expect(unplaced(graph, LAYERS, SOURCE_TOPS)).toEqual([]);
  });

  it('has no import circles in daemon/, cli/ or src/ (type-only imports count)', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('has every import point down the order', () => {
    expect(upwardImports(graph, LAYERS)).toEqual([]);
  });

  it('the checks see a planted upward import, sideways import and circle, so they can fail', () => {
    const fake = (sources: Record<string, string>) =>
      importGraph(
        Object.keys(sources).map((f) => join(ROOT, f)),
        (f) => sources[relative(ROOT, f)],
      );
    const upward = fake({
      'daemon/store/bad.ts': "import type { DaemonContext } from '../context.ts';",
      'daemon/context.ts': "import type { Bus } from './bus.ts';",
      'daemon/bus.ts': '',
    });
    expect(upwardImports(upward, LAYERS)).toEqual(['daemon/store/bad.ts -> daemon/context.ts']);
    const sideways = fake({ 'daemon/monitoring/bad.ts': "export { x } from '../certs/names.ts';", 'daemon/certs/names.ts': '' });
    expect(upwardImports(sideways, LAYERS)).toEqual(['daemon/monitoring/bad.ts -> daemon/certs/names.ts']);
    const down = fake({ 'daemon/status/fine.ts': "const m = await import('../monitoring/state.ts');", 'daemon/monitoring/state.ts': '' });
    expect(upwardImports(down, LAYERS)).toEqual([]);
    const circle = fake({
      'cli/a.ts': "import { b } from './b.ts';",
      'cli/b.ts': "import type { C } from './sub/c.ts';",
      'cli/sub/c.ts': "import '../a.ts';",
      'cli/d.ts': "import { a } from './a.ts';",
    });
    expect(circles(circle)).toEqual([['cli/a.ts', 'cli/b.ts', 'cli/sub/c.ts', 'cli/a.ts']]);
    expect(unplaced(fake({ 'daemon/newcomer/x.ts': '' }), LAYERS, SOURCE_TOPS)).toEqual(['daemon/newcomer/x.ts']);
  });
});
