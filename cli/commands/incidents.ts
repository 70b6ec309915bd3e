import type { Command } from 'commander';
import type { Incident } from '../../src/api/schemas/incidents.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import type { View } from '../output/render.ts';
import { act, type Runtime, resolveRef, withOutput } from '../runtime.ts';

/** An incident with the name of what it is about, for tables (json/yaml show the API's object as it is). */
type Row = Incident & { subject?: string; resourceName?: string; agentName?: string };

/** `api (id 3)`: the detail names what the incident is about, and its id for other commands. */
const nameAndId = (name: string | undefined, id: number | null) => (id === null ? undefined : `${name ?? '(deleted)'} (id ${id})`);

/** `1h02m`, `5m12s`, `40s`, `3d04h`: short enough for a column. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 86_400)}d${String(Math.floor((s % 86_400) / 3600)).padStart(2, '0')}h`;
}

const view: View<Row> = {
  columns: [
    { header: 'ID', get: (i) => i.id },
    { header: 'SUBJECT', get: (i) => i.subject ?? (i.resourceId !== null ? `resource ${i.resourceId}` : `agent ${i.agentId}`) },
    { header: 'STATE', get: (i) => (i.resolvedAt === null ? 'open' : 'resolved'), status: true },
    { header: 'OPENED', get: (i) => i.openedAt },
    { header: 'DURATION', get: (i) => duration(i.durationSeconds) },
    { header: 'CAUSE', get: (i) => [i.cause.errorCode, i.cause.message].filter(Boolean).join(' ') },
    // In the default table (the first question about an incident that sent nothing), kept narrow.
    { header: 'MAINT', get: (i) => (i.maintenance ? 'yes' : 'no') },
    { header: 'RESOURCE', get: (i) => nameAndId(i.resourceName, i.resourceId), wide: true },
    { header: 'AGENT', get: (i) => nameAndId(i.agentName, i.agentId), wide: true },
    { header: 'CHECKS', get: (i) => i.checks, wide: true },
    { header: 'RESOLVED', get: (i) => i.resolvedAt, wide: true },
  ],
};

/** Open incidents first, then the most recent. */
export const openFirst = (a: Incident, b: Incident) => Number(a.resolvedAt !== null) - Number(b.resolvedAt !== null) || b.id - a.id;

/** Names of the resources and agents the incidents are about (one list call each, only when a table shows them). */
async function named(rt: Runtime, list: Incident[]): Promise<Row[]> {
  if (rt.structured || list.length === 0) return list;
  const [resources, agents] = await Promise.all([
    list.some((i) => i.resourceId !== null) ? rt.client.call(ops.listAdminResources) : [],
    list.some((i) => i.agentId !== null) ? rt.client.call(ops.listAgents) : [],
  ]);
  const r = new Map(resources.map((x) => [x.id, x.name]));
  const a = new Map(agents.map((x) => [x.id, x.name]));
  return list.map((i) => ({
    ...i,
    resourceName: i.resourceId === null ? undefined : r.get(i.resourceId),
    agentName: i.agentId === null ? undefined : a.get(i.agentId),
    subject:
      i.resourceId !== null
        ? (r.get(i.resourceId) ?? `resource ${i.resourceId} (deleted)`)
        : `agent ${a.get(i.agentId!) ?? `${i.agentId} (deleted)`}`,
  }));
}

function state(value: string | undefined): 'open' | 'resolved' | undefined {
  if (value === undefined) return undefined;
  if (value !== 'open' && value !== 'resolved')
    throw new MonctlError('usage', `--state must be open or resolved, not "${value}"`, ExitCode.usage);
  return value;
}

export function register(program: Command): void {
  const incidents = program.command('incidents').description('incidents of resources and agents (ADMIN)');

  withOutput(incidents.command('list').alias('ls').description('incidents, open first, with their durations'))
    .option('--resource <resource>', 'only this resource (id or name)')
    .option('--agent <agent>', 'only this agent (id or name)')
    .option('--state <state>', 'open or resolved')
    .option('--limit <n>', 'how many (1 to 1000)', '100')
    .action(
      act(async (rt, opts: { resource?: string; agent?: string; state?: string; limit: string }) => {
        if (!/^\d+$/.test(opts.limit)) throw new MonctlError('usage', `--limit must be a number, not "${opts.limit}"`, ExitCode.usage);
        const { resourceId } = await import('./resources.ts');
        const query = {
          limit: Number(opts.limit),
          ...(opts.state ? { state: state(opts.state) } : {}),
          ...(opts.resource ? { resourceId: await resourceId(rt, opts.resource) } : {}),
          ...(opts.agent
            ? {
                agentId: await resolveRef(
                  opts.agent,
                  'agent',
                  () => rt.client.call(ops.listAgents),
                  (a) => a.name,
                ),
              }
            : {}),
        };
        const list = (await rt.client.call(ops.listIncidents, { query })).sort(openFirst);
        await rt.show(await named(rt, list), view);
      }),
    );

  withOutput(incidents.command('get').description('show an incident').argument('<id>', 'incident id')).action(
    act(async (rt, id: string) => {
      if (!/^\d+$/.test(id)) throw new MonctlError('usage', `an incident is named by its id, not "${id}"`, ExitCode.usage);
      const [incident] = await named(rt, [await rt.client.call(ops.getIncident, { params: { id: Number(id) } })]);
      await rt.show(incident, view);
    }),
  );
}
