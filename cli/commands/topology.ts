import type { Command } from 'commander';
import { TOPOLOGY_KINDS } from '../tui/kinds.ts';
import { ops } from '../api/ops.ts';
import type { Subscribe } from '../tui/topology-view.tsx';
import { act, type Runtime, withOutput } from '../runtime.ts';

async function watch(rt: Runtime): Promise<void> {
  const { printNdjson, openStream } = await import('../tui/stream.ts');
  if (!rt.tty) return printNdjson(rt, ops.topologyEvents.path, TOPOLOGY_KINDS);
  const { runInk } = await import('../tui/run-ink.tsx');
  const { TopologyApp } = await import('../tui/topology-view.tsx');
  await runInk((onFatal) => ({
    type: TopologyApp,
    props: { subscribe: ((handlers) => openStream(rt, ops.topologyEvents.path, TOPOLOGY_KINDS, handlers)) satisfies Subscribe, onFatal },
  }));
}

export function register(program: Command): void {
  withOutput(program.command('topology').description('pods, agents and routes as a tree (ADMIN); --watch for the live view'))
    .option('-w, --watch', 'live view on a terminal (NDJSON events when piped)')
    .action(
      act(async (rt, opts: { watch?: boolean }) => {
        if (opts.watch) return watch(rt);
        const topology = await rt.client.call(ops.getTopology);
        if (rt.structured) return rt.show(topology);
        const { topologyTree } = await import('../tui/topology-model.ts');
        for (const line of topologyTree(topology)) process.stdout.write(`${'  '.repeat(line.depth)}${line.text}\n`);
      }),
    );
}
