import './live-terminal.ts';
import { Box, Text, useApp, useInput } from 'ink';
import { useEffect, useRef, useState } from 'react';
import type { Subscribe } from './topology-view.tsx';
import type { StreamState } from './stream.ts';
import { TitleBar, useTerminalSize } from './screen.tsx';
import { type Column, fitColumns, TableHeader, TableRow } from './table.tsx';
import {
  age,
  applyMarks,
  applyResource,
  applyStatusEvent,
  type Marks,
  marksOf,
  type ResourceInfo,
  type Row,
  type Rows,
  sparkline,
  visibleRows,
} from './status-model.ts';

const colourOf = (s: string) => (s === 'available' ? 'green' : s === 'not_available' ? 'red' : s === 'unknown' ? 'yellow' : 'gray');

/**
 * The columns, by what an operator needs first: NAME and STATUS stay to 60
 * columns and below, then TYPE and ALERT, AGE, RECENT, and MS goes first.
 * TYPE is never cut (DOCKER is 6, WEBSOCKET shows as WS), nor STATUS (`not_available` is 13).
 */
export const statusColumns = (now: number): Array<Column<Row>> => [
  { header: 'NAME', priority: 1, min: 16, width: 28, grow: true, cell: (r) => r.name },
  // WEBSOCKET as WS: six columns keep AGE at 60 columns, and a cut type (`WEBSO…`) would not read.
  { header: 'TYPE', priority: 2, min: 6, width: 6, cell: (r) => (r.type === 'WEBSOCKET' ? 'WS' : r.type) },
  { header: 'STATUS', priority: 1, min: 13, width: 13, color: (r) => colourOf(r.status), cell: (r) => r.status },
  { header: 'ALERT', priority: 2, min: 14, width: 20, cell: (r) => alertCell(marksOf(r, now)) },
  { header: 'AGE', priority: 3, min: 6, width: 7, cell: (r) => age(r.checkedAt, now) },
  { header: 'MS', priority: 5, min: 5, width: 6, align: 'right', cell: (r) => (r.durationMs === null ? '-' : String(r.durationMs)) },
  // The newest checks, as many as fit.
  {
    header: 'RECENT',
    priority: 4,
    min: 8,
    width: 20,
    cell: (r, width) =>
      sparkline(r.recent)
        .slice(-width)
        .map((s) => ({ text: s.char, color: s.ok ? 'green' : 'red' })),
  },
];

/** `incident 5m12s` in red, `maint` in magenta. */
function alertCell(m: { incident: string; maintenance: boolean }) {
  return [
    { text: m.incident, color: 'red' },
    { text: m.incident && m.maintenance ? ' ' : '' },
    { text: m.maintenance ? 'maint' : '', color: 'magenta' },
  ];
}

export interface StatusViewProps {
  rows: Rows;
  state: StreamState;
  filter: string;
  editing: boolean;
  now: number;
  /** Rows that fit on the screen; the rest is counted. */
  maxRows?: number;
  /** Terminal columns (default: the terminal's). */
  width?: number;
}

export function StatusView(props: StatusViewProps) {
  const { rows, state, filter, editing, now, maxRows = 1000 } = props;
  const size = useTerminalSize();
  const width = props.width ?? size.columns;
  const all = visibleRows(rows, filter);
  const list = all.slice(0, Math.max(1, maxRows));
  const placed = fitColumns(statusColumns(now), width);
  const hint = editing ? `/${filter}█` : filter ? `filter: ${filter}` : '/ to filter, q to quit';
  return (
    <Box flexDirection="column">
      <TitleBar title="monctl status" state={state} editing={editing} hint={hint} />
      <TableHeader placed={placed} />
      {list.map((r) => (
        <TableRow key={r.id} placed={placed} row={r} />
      ))}
      {list.length === 0 ? <Text dimColor>{rows.size ? 'no resource matches the filter' : 'no resources yet'}</Text> : null}
      {all.length > list.length ? <Text dimColor wrap="truncate-end">{`… ${all.length - list.length} more (/ to filter)`}</Text> : null}
    </Box>
  );
}

export interface StatusAppProps {
  subscribe: Subscribe;
  onFatal: (err: Error) => void;
  marks?: () => Promise<Marks>;
  marksEveryMs?: number;
  /** A resource that events name but the snapshot did not have (created since): its name, type and status. */
  lookup?: (id: number) => Promise<ResourceInfo>;
}

/** The live app: `/` starts a filter (Enter keeps it, Esc clears it), `q` quits. */
export function StatusApp(props: StatusAppProps) {
  const { exit } = useApp();
  const size = useTerminalSize();
  const [rows, setRows] = useState<Rows>(new Map());
  const [state, setState] = useState<StreamState>('connecting');
  const [filter, setFilter] = useState('');
  const [editing, setEditingState] = useState(false);
  // Keys typed right after `/` can reach the handler of the render before (Ink re-subscribes it in an
  // effect): the mode is read from a ref, so `/db` typed fast filters on "db".
  const editingNow = useRef(false);
  const setEditing = (on: boolean) => {
    editingNow.current = on;
    setEditingState(on);
  };
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    // ADMIN: open incidents and maintenance from the admin API now and then (windows open and close with time).
    const refresh = () =>
      props.marks?.().then(
        (m) => setRows((r) => applyMarks(r, m)),
        () => undefined,
      );
    const marksTimer = props.marks ? setInterval(refresh, props.marksEveryMs ?? 30_000) : undefined;
    const close = props.subscribe({
      onEvent: (e) => {
        setRows((r) => applyStatusEvent(r, e.event, e.data));
        if (e.event === 'SNAPSHOT') void refresh();
      },
      onState: setState,
      onFatal: (err) => {
        props.onFatal(err);
        exit();
      },
    });
    return () => {
      clearInterval(timer);
      clearInterval(marksTimer);
      close();
    };
  }, []);
  // CHECK_COMPLETED carries only the id: a row that came from an event is completed from the API, once per id.
  const asked = useRef(new Set<number>());
  useEffect(() => {
    for (const r of rows.values()) {
      if (!r.partial || !props.lookup || asked.current.has(r.id)) continue;
      asked.current.add(r.id);
      props.lookup(r.id).then(
        (info) => setRows((cur) => applyResource(cur, r.id, info)),
        () => undefined,
      );
    }
  }, [rows]);
  useInput((input, key) => {
    if (editingNow.current) {
      if (key.return) setEditing(false);
      else if (key.escape) {
        setFilter('');
        setEditing(false);
      } else if (key.backspace || key.delete) setFilter((f) => f.slice(0, -1));
      else if (input && !key.ctrl && !key.meta) setFilter((f) => f + input);
      return;
    }
    if (input === 'q') exit();
    else if (input === '/') setEditing(true);
    else if (key.escape) setFilter('');
  });
  return <StatusView rows={rows} state={state} filter={filter} editing={editing} now={now} maxRows={size.rows - 4} width={size.columns} />;
}
