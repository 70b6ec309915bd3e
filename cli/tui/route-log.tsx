import './live-terminal.ts';
import { Box, Text, useApp, useInput } from 'ink';
import { useEffect, useState } from 'react';
import type { Route, RouteLogEntry } from '../../src/api/schemas/tunnel.ts';
import { ops } from '../api/ops.ts';
import type { Runtime } from '../runtime.ts';
import { ROUTE_LOG_KINDS } from './kinds.ts';
import { TitleBar, useTerminalSize } from './screen.tsx';
import { openStream, printNdjson, type StreamState } from './stream.ts';
import { type Column, fitColumns, TableHeader, TableRow } from './table.tsx';
import type { Subscribe } from './topology-view.tsx';

const text = (v: unknown) => (v === null || v === undefined ? '-' : String(v));
const colourOf = (e: RouteLogEntry) => (e.error || (e.status ?? 500) >= 500 ? 'red' : (e.status ?? 0) >= 400 ? 'yellow' : undefined);

/**
 * The columns of `routes log` without --follow, in its order. PATH and
 * STATUS stay at any width, then the time and method, ERROR, MS, and CLIENT
 * goes first; AT narrower than a full timestamp shows the time of day.
 */
export const routeLogColumns = (
  [
    { header: 'AT', priority: 2, min: 8, width: 19, cell: (e, w) => (w >= 19 ? e.at.slice(0, 19) : e.at.slice(11, 19)) },
    { header: 'METHOD', priority: 2, min: 6, width: 7, cell: (e) => text(e.method) },
    { header: 'PATH', priority: 1, min: 12, width: 24, grow: true, cell: (e) => text(e.path) },
    { header: 'STATUS', priority: 1, min: 6, width: 6, cell: (e) => text(e.status ?? 'ERR') },
    { header: 'MS', priority: 4, min: 5, width: 6, align: 'right', cell: (e) => text(e.durationMs) },
    { header: 'CLIENT', priority: 5, min: 15, width: 16, cell: (e) => text(e.clientIp) },
    { header: 'ERROR', priority: 3, min: 10, width: 20, cell: (e) => e.error ?? '' },
  ] satisfies Array<Column<RouteLogEntry>>
).map((c): Column<RouteLogEntry> => ({ ...c, color: colourOf }));

/** How a route is named in the title: its name and what it matches. */
export const routeTitle = (r: Pick<Route, 'name' | 'type' | 'hostname' | 'pathPrefix' | 'listenPort'>) =>
  `monctl routes log ${r.name} (${r.type === 'TCP' ? `:${r.listenPort}` : `${r.hostname}${r.pathPrefix ?? '/'}`})`;

export function RouteLogView(props: { title: string; entries: RouteLogEntry[]; state: StreamState; max?: number; width?: number }) {
  const { title, entries, state, max = 30 } = props;
  const size = useTerminalSize();
  const placed = fitColumns(routeLogColumns, props.width ?? size.columns);
  return (
    <Box flexDirection="column">
      <TitleBar title={title} state={state} hint="q to quit" />
      <TableHeader placed={placed} />
      {entries.slice(-max).map((e) => (
        <TableRow key={e.id} placed={placed} row={e} />
      ))}
      {entries.length === 0 ? <Text dimColor>waiting for requests…</Text> : null}
    </Box>
  );
}

/** Merges by id, oldest first, keeping the newest 200. */
const merge = (a: RouteLogEntry[], b: RouteLogEntry[]) =>
  [...new Map([...a, ...b].map((e) => [e.id, e])).values()].sort((x, y) => x.id - y.id).slice(-200);

function RouteLogApp(props: {
  title: string;
  subscribe: Subscribe;
  backlog: () => Promise<RouteLogEntry[]>;
  onFatal: (err: Error) => void;
}) {
  const { exit } = useApp();
  const size = useTerminalSize();
  const [entries, setEntries] = useState<RouteLogEntry[]>([]);
  const [state, setState] = useState<StreamState>('connecting');
  useEffect(() => {
    const close = props.subscribe({
      onEvent: (e) => setEntries((list) => merge(list, [e.data as RouteLogEntry])),
      onState: setState,
      onFatal: (err) => {
        props.onFatal(err);
        exit();
      },
    });
    props.backlog().then(
      (past) => setEntries((list) => merge(past, list)),
      (err: Error) => {
        props.onFatal(err);
        exit();
      },
    );
    return close;
  }, []);
  useInput((input) => {
    if (input === 'q') exit();
  });
  return <RouteLogView title={props.title} entries={entries} state={state} max={Math.max(1, size.rows - 3)} width={size.columns} />;
}

/** `routes log ID --follow`: Ink on a terminal, NDJSON when piped. */
export async function followRouteLog(rt: Runtime, id: number): Promise<void> {
  const path = rt.client.url(ops.routeLogEvents, { params: { id } }).slice(rt.client.server.length);
  // The stream carries new entries only: the recent past comes from the REST log.
  const backlog = async () => (await rt.client.call(ops.getRouteLog, { params: { id }, query: { limit: 20 } })).reverse();
  if (!rt.tty) return printNdjson(rt, path, ROUTE_LOG_KINDS, { event: 'LOG', items: backlog });
  const [{ runInk }, route] = await Promise.all([import('./run-ink.tsx'), rt.client.call(ops.getRoute, { params: { id } })]);
  await runInk((onFatal) => ({
    type: RouteLogApp,
    props: {
      title: routeTitle(route),
      backlog,
      subscribe: ((handlers) => openStream(rt, path, ROUTE_LOG_KINDS, handlers)) satisfies Subscribe,
      onFatal,
    },
  }));
}
