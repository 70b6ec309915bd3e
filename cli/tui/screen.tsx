import './live-terminal.ts';
import { Box, Text, useStdout } from 'ink';
import { createContext, type ReactNode, useContext, useEffect, useState } from 'react';
import type { StreamState } from './stream.ts';

export interface Size {
  columns: number;
  rows: number;
}

const SizeContext = createContext<Size | null>(null);

/** The terminal's size, re-read on every resize inside `runInk` (the stdout's size elsewhere, e.g. in tests). */
export function useTerminalSize(): Size {
  const given = useContext(SizeContext);
  const { stdout } = useStdout();
  return given ?? { columns: stdout.columns || 80, rows: stdout.rows || 24 };
}

/** Erase the whole screen and put the cursor home. */
export const CLEAR_SCREEN = '\u001b[2J\u001b[3J\u001b[H';

/**
 * Re-lays a running view out when the terminal is resized. Ink on its own
 * re-renders the old layout at the new width (the views' widths are React
 * state) and erases only as many lines as it last wrote, which misses the
 * ones the terminal wrapped or reflowed: mixed layouts and stale rows. So on
 * `resize` the size state changes, and once Ink has rendered the tree laid
 * out for that size, the whole screen is cleared and that frame written again
 * (Ink's own `write` does the clearing and restores its last frame).
 */
export function createScreen() {
  let pending = false;
  let renderedFor = '';
  let write: ((data: string) => void) | undefined;
  let current = '';

  function Screen(props: { children: ReactNode }) {
    const { stdout, write: inkWrite } = useStdout();
    const read = (): Size => ({ columns: stdout.columns || 80, rows: stdout.rows || 24 });
    const [size, setSize] = useState(read);
    write = inkWrite;
    renderedFor = `${size.columns}x${size.rows}`;
    useEffect(() => {
      const resized = () => {
        const next = read();
        current = `${next.columns}x${next.rows}`;
        pending = true;
        setSize(next);
      };
      stdout.on('resize', resized);
      return () => {
        stdout.off('resize', resized);
      };
    }, []);
    return <SizeContext.Provider value={size}>{props.children}</SizeContext.Provider>;
  }

  /** Ink's `onRender`: called before each frame is written; the clear waits until that frame is out. */
  function onRender() {
    if (!pending || renderedFor !== current) return;
    pending = false;
    setImmediate(() => write?.(CLEAR_SCREEN));
  }
  return { Screen, onRender };
}

export function StateBadge(props: { state: StreamState }) {
  const { state } = props;
  const colour = state === 'live' ? 'green' : state === 'reconnecting' ? 'red' : 'yellow';
  return (
    <Text color={colour} wrap="truncate-end">
      {state === 'reconnecting' ? '● reconnecting…' : state === 'live' ? '● live' : '● connecting…'}
    </Text>
  );
}

/**
 * The first line of every view: what it is, the stream's state and a hint.
 * It is one line at any width: the title and the hint are cut with `…`
 * before it could wrap, the state is kept whole.
 */
export function TitleBar(props: { title: string; state: StreamState; hint: string; editing?: boolean }) {
  return (
    <Box height={1} flexShrink={0}>
      {/* The title gives way first (a long route name), the hint only when the title cannot. */}
      <Box flexShrink={100}>
        <Text bold wrap="truncate-end">
          {props.title}
        </Text>
      </Box>
      <Box flexShrink={0} marginLeft={2}>
        <StateBadge state={props.state} />
      </Box>
      <Box flexShrink={1} marginLeft={2}>
        <Text dimColor={!props.editing} wrap="truncate-end">
          {props.hint}
        </Text>
      </Box>
    </Box>
  );
}
