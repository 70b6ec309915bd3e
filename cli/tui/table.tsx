import './live-terminal.ts';
import { Box, Text } from 'ink';
import type { ReactNode } from 'react';

/** What a cell shows: plain text, or coloured runs (a sparkline, `incident 5m maint`) read as one text. */
export type Cell = string | Array<{ text: string; color?: string }>;

/**
 * One column of a live table. As the terminal narrows, every column shrinks
 * towards `min`, then whole columns drop, the highest `priority` number first
 * (1 is kept longest), so that no row ever wraps.
 */
export interface Column<T> {
  header: string;
  priority: number;
  /** Narrowest useful width: below it the column is dropped rather than shown. */
  min: number;
  /** Width it gets when the terminal has room (`min` = `width` for fixed ones such as TYPE). */
  width: number;
  /** Takes what is left once every column has its preferred width (one per table). */
  grow?: boolean;
  /** Numbers read better right-aligned. */
  align?: 'right';
  color?: (row: T) => string | undefined;
  /** The cell at the width it was given (a timestamp may shorten itself rather than be cut). */
  cell: (row: T, width: number) => Cell;
}

export interface Placed<T> {
  column: Column<T>;
  width: number;
}

/** At least one space between columns, always. */
export const GAP = 1;

/**
 * Which columns fit in `total` cells and how wide each is, in display order.
 * Columns are admitted by priority while their minimum widths (and the gaps)
 * fit; the spare room then brings them to their preferred widths in priority
 * order, and what is still left goes to the `grow` column.
 */
export function fitColumns<T>(columns: Array<Column<T>>, total: number): Array<Placed<T>> {
  const byPriority = [...columns].sort((a, b) => a.priority - b.priority);
  const kept: Array<Column<T>> = [];
  let used = 0;
  for (const c of byPriority) {
    const need = c.min + (kept.length ? GAP : 0);
    // Dropping is strictly by priority: a narrow low-priority column never jumps the queue.
    if (kept.length && used + need > total) break;
    kept.push(c);
    used += need;
  }
  const width = new Map(kept.map((c) => [c, c.min]));
  let spare = Math.max(0, total - used);
  for (const c of kept) {
    const add = Math.min(spare, c.width - c.min);
    width.set(c, c.min + add);
    spare -= add;
  }
  const grow = kept.find((c) => c.grow);
  if (grow) width.set(grow, width.get(grow)! + spare);
  // A terminal narrower than the first column's minimum: it gets what there is.
  if (used > total) width.set(kept[0], Math.max(1, total));
  return columns.filter((c) => width.has(c)).map((c) => ({ column: c, width: width.get(c)! }));
}

function cellNode(cell: Cell, color: string | undefined, bold = false) {
  // truncate-end: a long value ends in `…` inside its own box and never runs into the next column.
  if (typeof cell === 'string')
    return (
      <Text wrap="truncate-end" color={color} bold={bold}>
        {cell}
      </Text>
    );
  return (
    <Text wrap="truncate-end">
      {cell.map((run, i) => (
        <Text key={i} color={run.color}>
          {run.text}
        </Text>
      ))}
    </Text>
  );
}

function line<T>(placed: Array<Placed<T>>, node: (p: Placed<T>) => ReactNode) {
  return (
    <Box height={1} flexShrink={0}>
      {placed.map((p, i) => (
        <Box
          key={p.column.header}
          width={p.width}
          flexShrink={0}
          marginRight={i < placed.length - 1 ? GAP : 0}
          justifyContent={p.column.align === 'right' ? 'flex-end' : 'flex-start'}
        >
          {node(p)}
        </Box>
      ))}
    </Box>
  );
}

/** The header row, in the same boxes as the rows below it. */
export function TableHeader<T>(props: { placed: Array<Placed<T>> }) {
  return line(props.placed, (p) => cellNode(p.column.header, undefined, true));
}

export function TableRow<T>(props: { placed: Array<Placed<T>>; row: T }) {
  const { placed, row } = props;
  return line(placed, (p) => cellNode(p.column.cell(row, p.width), p.column.color?.(row)));
}
