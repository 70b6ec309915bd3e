import './live-terminal.ts';
import { Box, Text, useApp, useInput, useStdout } from 'ink';
import React, { useEffect, useState } from 'react';
import { StateBadge, type Subscribe } from './topology-view.ts';
import type { StreamState } from './stream.ts';
import { age, applyStatusEvent, type Rows, sparkline, visibleRows } from './status-model.ts';

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
    h(Text, { bold: true }, `${pad('NAME', 28)} ${pad('TYPE', 7)}${pad('STATUS', 14)}${pad('AGE', 8)}${pad('MS', 7)}RECENT`),
    ...list.map((r) => h(Box, { key: r.id },
      h(Text, null, `${pad(r.name, 28)} ${pad(r.type, 7)}`),
      h(Text, { color: colourOf(r.status) }, pad(r.status, 14)),
      h(Text, null, `${pad(age(r.checkedAt, now), 8)}${pad(r.durationMs === null ? '-' : String(r.durationMs), 7)}`),
      ...sparkline(r.recent).map((s, i) => h(Text, { key: i, color: s.ok ? 'green' : 'red' }, s.char)))),
    list.length === 0 ? h(Text, { dimColor: true }, rows.size ? 'no resource matches the filter' : 'no resources yet') : null,
    all.length > list.length ? h(Text, { dimColor: true }, `… ${all.length - list.length} more (/ to filter)`) : null,
  );
}

/** The live app: `/` starts a filter (Enter keeps it, Esc clears it), `q` quits. */
export function StatusApp(props: { subscribe: Subscribe; onFatal: (err: Error) => void }) {
  const { exit } = useApp();
  const { stdout } = useStdout();
  const [rows, setRows] = useState<Rows>(new Map());
  const [state, setState] = useState<StreamState>('connecting');
  const [filter, setFilter] = useState('');
  const [editing, setEditing] = useState(false);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    const close = props.subscribe({
      onEvent: (e) => setRows((r) => applyStatusEvent(r, e.event, e.data)),
      onState: setState,
      onFatal: (err) => {
        props.onFatal(err);
        exit();
      },
    });
    return () => {
      clearInterval(timer);
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
