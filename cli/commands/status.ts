import type { Command } from 'commander';
import { ops } from '../api/ops.ts';
import { MONITORING_KINDS } from '../tui/kinds.ts';
import type { Subscribe } from '../tui/topology-view.ts';
import { act, type Runtime, withOutput } from '../runtime.ts';

async function watch(rt: Runtime): Promise<void> {
  const { printNdjson, openStream } = await import('../tui/stream.ts');
  if (!rt.tty) return printNdjson(rt, ops.monitoringEvents.path, MONITORING_KINDS);
  const { runInk } = await import('../tui/run-ink.ts');
  const { StatusApp } = await import('../tui/status-view.ts');
  await runInk((onFatal) => ({
    type: StatusApp,
    props: { subscribe: ((handlers) => openStream(rt, ops.monitoringEvents.path, MONITORING_KINDS, handlers)) satisfies Subscribe, onFatal },
  }));
}

export function register(program: Command): void {
  withOutput(program.command('status').description('resource status at a glance; --watch for the live view'))
    .option('-w, --watch', 'live view on a terminal (NDJSON events when piped)')
    .action(act(async (rt, opts: { watch?: boolean }) => {
      if (opts.watch) return watch(rt);
      const { listAll, view } = await import('./resources.ts');
      await rt.show(await listAll(rt), view);
    }));
}
