import './live-terminal.ts';
import { Box, Text, useApp, useInput, useStdout } from 'ink';
import React, { useEffect, useState } from 'react';
import type { RouteLogEntry } from '../../src/api/schemas/tunnel.ts';
import { ops } from '../api/ops.ts';
import type { Runtime } from '../runtime.ts';
import { ROUTE_LOG_KINDS } from './kinds.ts';
import { openStream, printNdjson, type StreamState } from './stream.ts';
import { StateBadge, type Subscribe } from './topology-view.ts';

const h = React.createElement;
const pad = (s: unknown, n: number) => String(s ?? '-').padEnd(n).slice(0, n);

export function RouteLogView(props: { routeId: number; entries: RouteLogEntry[]; state: StreamState; max?: number }) {
  const { routeId, entries, state, max = 30 } = props;
  return h(Box, { flexDirection: 'column' },
    h(Box, { gap: 2 }, h(Text, { bold: true }, `monctl routes log ${routeId} --follow`), h(StateBadge, { state }), h(Text, { dimColor: true }, 'q to quit')),
    h(Text, { bold: true }, `${pad('AT', 20)}${pad('METHOD', 8)}${pad('STATUS', 7)}${pad('MS', 7)}${pad('CLIENT', 16)}PATH`),
    ...entries.slice(-max).map((e) => h(Text, { key: e.id, color: e.error || (e.status ?? 500) >= 500 ? 'red' : (e.status ?? 0) >= 400 ? 'yellow' : undefined, wrap: 'truncate' },
      `${pad(e.at, 20)}${pad(e.method, 8)}${pad(e.status ?? 'ERR', 7)}${pad(e.durationMs, 7)}${pad(e.clientIp, 16)}${e.path ?? ''}${e.error ? `  ${e.error}` : ''}`)),
    entries.length === 0 ? h(Text, { dimColor: true }, 'waiting for requests…') : null,
  );
}

/** Merges by id, oldest first, keeping the newest 200. */
const merge = (a: RouteLogEntry[], b: RouteLogEntry[]) =>
  [...new Map([...a, ...b].map((e) => [e.id, e])).values()].sort((x, y) => x.id - y.id).slice(-200);

function RouteLogApp(props: { routeId: number; subscribe: Subscribe; backlog: () => Promise<RouteLogEntry[]>; onFatal: (err: Error) => void }) {
  const { exit } = useApp();
  const { stdout } = useStdout();
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
    props.backlog().then((past) => setEntries((list) => merge(past, list)), (err: Error) => {
      props.onFatal(err);
      exit();
    });
    return close;
  }, []);
  useInput((input) => {
    if (input === 'q') exit();
  });
  return h(RouteLogView, { routeId: props.routeId, entries, state, max: Math.max(1, (stdout.rows || 40) - 4) });
}

/** `routes log ID --follow`: Ink on a terminal, NDJSON when piped. */
export async function followRouteLog(rt: Runtime, id: number): Promise<void> {
  const path = rt.client.url(ops.routeLogEvents, { params: { id } }).slice(rt.client.server.length);
  // The stream carries new entries only: the recent past comes from the REST log.
  const backlog = async () => (await rt.client.call(ops.getRouteLog, { params: { id }, query: { limit: 20 } })).reverse();
  if (!rt.tty) return printNdjson(rt, path, ROUTE_LOG_KINDS, { event: 'LOG', items: backlog });
  const { runInk } = await import('./run-ink.ts');
  await runInk((onFatal) => ({
    type: RouteLogApp,
    props: { routeId: id, backlog, subscribe: ((handlers) => openStream(rt, path, ROUTE_LOG_KINDS, handlers)) satisfies Subscribe, onFatal },
  }));
}
