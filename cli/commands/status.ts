import type { Command } from 'commander';
import { ops } from '../api/ops.ts';
import { MONITORING_KINDS } from '../tui/kinds.ts';
import type { Marks } from '../tui/status-model.ts';
import type { Subscribe } from '../tui/topology-view.tsx';
import { act, type Runtime, withOutput } from '../runtime.ts';

/** Open incidents and resources in maintenance, from the admin API (the stream brings incident changes in between). */
async function adminMarks(rt: Runtime): Promise<Marks> {
  const [incidents, resources] = await Promise.all([
    rt.client.call(ops.listIncidents, { query: { state: 'open', limit: 1000 } }),
    rt.client.call(ops.listAdminResources),
  ]);
  return { incidents, inMaintenance: resources.filter((r) => r.inMaintenance).map((r) => r.id) };
}

async function watch(rt: Runtime): Promise<void> {
  const { printNdjson, openStream } = await import('../tui/stream.ts');
  if (!rt.tty) return printNdjson(rt, ops.monitoringEvents.path, MONITORING_KINDS);
  const { runInk } = await import('../tui/run-ink.tsx');
  const { StatusApp } = await import('../tui/status-view.tsx');
  const marks = rt.isAdmin ? () => adminMarks(rt) : undefined;
  // Resources created while the view runs: the stream's events carry only their id.
  const lookup = (id: number) => rt.client.call(ops.getResource, { params: { id } });
  await runInk((onFatal) => ({
    type: StatusApp,
    props: {
      subscribe: ((handlers) => openStream(rt, ops.monitoringEvents.path, MONITORING_KINDS, handlers)) satisfies Subscribe,
      onFatal,
      marks,
      lookup,
    },
  }));
}

export function register(program: Command): void {
  withOutput(program.command('status').description('resource status at a glance; --watch for the live view'))
    .option('-w, --watch', 'live view on a terminal (NDJSON events when piped)')
    .action(
      act(async (rt, opts: { watch?: boolean }) => {
        if (opts.watch) return watch(rt);
        const { listAll, view } = await import('./resources.ts');
        await rt.show(await listAll(rt), view);
      }),
    );
}
