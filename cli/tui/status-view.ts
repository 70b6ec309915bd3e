import './live-terminal.ts';
import { Box, Text, useApp, useInput, useStdout } from 'ink';
import React, { useEffect, useState } from 'react';
import { StateBadge, type Subscribe } from './topology-view.ts';
import type { StreamState } from './stream.ts';
import { age, applyMarks, applyStatusEvent, type Marks, marksOf, type Rows, sparkline, visibleRows } from './status-model.ts';

const h = React.createElement;
const colourOf = (s: string) => (s === 'available' ? 'green' : s === 'not_available' ? 'red' : s === 'unknown' ? 'yellow' : 'gray');
const pad = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s.padEnd(n));

export interface StatusViewProps {
  rows: Rows;
  state: StreamState;
  filter: string;
  editing: boolean;
  now: number;
  /** Rows that fit on the screen; the rest is counted. */
  maxRows?: number;
}

export function StatusView(props: StatusViewProps) {
  const { rows, state, filter, editing, now, maxRows = 1000 } = props;
  const all = visibleRows(rows, filter);
  const list = all.slice(0, Math.max(1, maxRows));
  return h(Box, { flexDirection: 'column' },
    h(Box, { gap: 2 }, h(Text, { bold: true }, 'monctl status'), h(StateBadge, { state }),
      h(Text, { dimColor: !editing }, editing ? `/${filter}█` : filter ? `filter: ${filter}` : '/ to filter, q to quit')),
    h(Text, { bold: true }, `${pad('NAME', 28)} ${pad('TYPE', 7)}${pad('STATUS', 14)}${pad('ALERT', 23)}${pad('AGE', 8)}${pad('MS', 7)}RECENT`),
    ...list.map((r) => h(Box, { key: r.id },
      h(Text, null, `${pad(r.name, 28)} ${pad(r.type, 7)}`),
      h(Text, { color: colourOf(r.status) }, pad(r.status, 14)),
      ...alertCells(marksOf(r, now)),
      h(Text, null, `${pad(age(r.checkedAt, now), 8)}${pad(r.durationMs === null ? '-' : String(r.durationMs), 7)}`),
      ...sparkline(r.recent).map((s, i) => h(Text, { key: i, color: s.ok ? 'green' : 'red' }, s.char)))),
    list.length === 0 ? h(Text, { dimColor: true }, rows.size ? 'no resource matches the filter' : 'no resources yet') : null,
    all.length > list.length ? h(Text, { dimColor: true }, `… ${all.length - list.length} more (/ to filter)`) : null,
  );
}

/** `incident 5m12s` in red, `maint` in magenta, padded to one column together. */
function alertCells(m: { incident: string; maintenance: boolean }) {
  const incident = m.incident ? `${m.incident} ` : '';
  const maint = m.maintenance ? 'maint' : '';
  return [
    h(Text, { key: 'i', color: 'red' }, incident),
    h(Text, { key: 'm', color: 'magenta' }, maint),
    h(Text, { key: 'p' }, ' '.repeat(Math.max(1, 23 - incident.length - maint.length))),
  ];
}

/** The live app: `/` starts a filter (Enter keeps it, Esc clears it), `q` quits. */
export function StatusApp(props: { subscribe: Subscribe; onFatal: (err: Error) => void; marks?: () => Promise<Marks>; marksEveryMs?: number }) {
  const { exit } = useApp();
  const { stdout } = useStdout();
  const [rows, setRows] = useState<Rows>(new Map());
  const [state, setState] = useState<StreamState>('connecting');
  const [filter, setFilter] = useState('');
  const [editing, setEditing] = useState(false);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    // ADMIN: open incidents and maintenance from the admin API now and then (windows open and close with time).
    const refresh = () => props.marks?.().then((m) => setRows((r) => applyMarks(r, m)), () => undefined);
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
  useInput((input, key) => {
    if (editing) {
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
  return h(StatusView, { rows, state, filter, editing, now, maxRows: (stdout.rows || 40) - 4 });
}
