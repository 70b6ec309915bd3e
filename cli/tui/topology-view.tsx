import './live-terminal.ts';
import { Box, Text, useApp, useInput } from 'ink';
import { useEffect, useRef, useState } from 'react';
import type { Topology } from '../../src/api/schemas/tunnel.ts';
import type { StreamEvent, StreamState } from './stream.ts';
import { applyTopologyEvent, describeEvent, topologyTree } from './topology-model.ts';
import { TitleBar, useTerminalSize } from './screen.tsx';
import { TrafficShare } from './traffic-share.ts';

/** How often the live view recomputes the traffic shares while no event comes (they age out of the window). */
const SHARE_REFRESH_MS = 5000;

const colourOf = (status?: string) =>
  status === 'CONNECTED' || status === 'up' ? 'green' : status === 'DISCONNECTED' ? 'red' : status === 'PENDING' ? 'yellow' : undefined;

export interface TopologyViewProps {
  topology: Topology | null;
  events: string[];
  state: StreamState;
  maxEvents?: number;
  /** Tree lines that fit on the screen; the rest is counted. */
  maxLines?: number;
  /** Requests per agent of a route in the last minute (the pools' traffic shares). */
  recent?: (routeId: number) => Map<number, number>;
}

/**
 * The screen: a title with the stream state, the tree, and the newest events.
 * Every line is one terminal line at any width (cut with `…`), so the counts
 * of lines that fit hold and nothing wraps.
 */
export function TopologyView(props: TopologyViewProps) {
  const { topology, events, state, maxEvents = 10, maxLines = 1000, recent } = props;
  const full = topology ? topologyTree(topology, recent) : [];
  const tree = full.slice(0, Math.max(1, maxLines));
  const lines = tree.map((l, i) => (
    <Text key={i} color={colourOf(l.status)} wrap="truncate-end">{`${'  '.repeat(l.depth)}${l.depth ? '└ ' : ''}${l.text}`}</Text>
  ));
  return (
    <Box flexDirection="column">
      <TitleBar title="monctl topology" state={state} hint="q to quit" />
      <Box flexDirection="column" borderStyle="round" paddingX={1}>
        {topology ? tree.length ? lines : <Text dimColor>no pods</Text> : <Text dimColor>waiting for the snapshot…</Text>}
        {full.length > tree.length ? <Text dimColor wrap="truncate-end">{`… ${full.length - tree.length} more lines`}</Text> : null}
      </Box>
      <Text bold>Events</Text>
      <Box flexDirection="column" paddingX={1}>
        {events.length ? (
          events.slice(-maxEvents).map((e, i) => (
            <Text key={i} wrap="truncate-end">
              {e}
            </Text>
          ))
        ) : (
          <Text dimColor>none yet</Text>
        )}
      </Box>
    </Box>
  );
}

export interface Subscribe {
  (handlers: { onEvent: (e: StreamEvent) => void; onState: (s: StreamState) => void; onFatal: (err: Error) => void }): () => void;
}

/** The live app: state from the stream, `q` or Ctrl-C quits. */
export function TopologyApp(props: { subscribe: Subscribe; onFatal: (err: Error) => void }) {
  const { exit } = useApp();
  const size = useTerminalSize();
  // One state: each event line is named from the topology as it was before that event.
  const [{ topology, events }, setView] = useState<{ topology: Topology | null; events: string[] }>({ topology: null, events: [] });
  const [state, setState] = useState<StreamState>('connecting');
  const traffic = useRef(new TrafficShare());
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), SHARE_REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  useEffect(
    () =>
      props.subscribe({
        onEvent: (e) => {
          const at = Date.now();
          let data = e.data as { routeId: number; agentId: number; id: number; requestId: string };
          if (e.event === 'REQUEST_IN_FLIGHT') traffic.current.started(data.requestId, data.agentId);
          if (e.event === 'REQUEST_COMPLETED') {
            traffic.current.record(data.routeId, data.agentId, at);
            data = { ...data, startedOn: traffic.current.finished(data.requestId) } as typeof data;
          }
          if (e.event === 'ROUTE_DELETED') traffic.current.forget(data.id);
          setNow(at);
          setView((v) => ({
            topology: applyTopologyEvent(v.topology, e.event, data),
            // Probe loads update the tree; every 5 s in the event pane would drown the events.
            events: e.event === 'PROBE_LOAD' ? v.events : [...v.events.slice(-99), describeEvent(e.event, e.data, v.topology)],
          }));
        },
        onState: setState,
        onFatal: (err) => {
          props.onFatal(err);
          exit();
        },
      }),
    [],
  );
  useInput((input) => {
    if (input === 'q') exit();
  });
  const rows = size.rows;
  const maxEvents = Math.max(3, Math.min(10, Math.floor(rows / 4)));
  const recent = (routeId: number) => traffic.current.recent(routeId, now);
  return (
    <TopologyView topology={topology} events={events} state={state} maxEvents={maxEvents} maxLines={rows - maxEvents - 7} recent={recent} />
  );
}
