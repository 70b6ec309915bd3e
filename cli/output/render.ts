import { ExitCode, MonctlError } from '../../src/errors.ts';
import { type Colour, paint, statusColour } from './style.ts';

/**
 * One entry point for every result: `render(data, view, options)` picks the
 * format from a registry (table, wide, json, yaml, ndjson), so commands only
 * describe their columns.
 */
export interface Column<T = any> {
  header: string;
  get: (row: T) => unknown;
  /** Only in `-o wide` (and in the detail view of a single object). */
  wide?: boolean;
  /** Only in the detail view of a single object (too much for a row of a list). */
  detail?: boolean;
  /** Colour cells by their status word. */
  status?: boolean;
  /** Detail view: no line at all when the value is undefined (another resource type's fields). */
  omitUnset?: boolean;
}

export interface View<T = any> {
  columns: Column<T>[];
}

export interface RenderOptions {
  colour: boolean;
  tty: boolean;
}

type Renderer = (data: unknown, view: View | undefined, opts: RenderOptions) => string | Promise<string>;

export function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (Array.isArray(value)) return value.length ? value.map(cell).join(',') : '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function rowsOf(data: unknown, view: View, wide: boolean, opts: RenderOptions): { head: string[]; rows: string[][] } {
  const one = !Array.isArray(data);
  const columns = view.columns.filter((c) => (c.detail ? one : wide || !c.wide) && !(one && c.omitUnset && c.get(data) === undefined));
  const items = Array.isArray(data) ? data : [data];
  const rows = items.map((item) =>
    columns.map((c) => {
      const text = cell(c.get(item));
      const colour: Colour | undefined = c.status ? statusColour(text) : undefined;
      return colour ? paint(opts.colour, colour, text) : text;
    }),
  );
  return { head: columns.map((c) => c.header), rows };
}

/** A list as columns; a single object as FIELD/VALUE lines with every column. */
async function table(data: unknown, view: View | undefined, opts: RenderOptions, wide: boolean): Promise<string> {
  if (!view) return `${JSON.stringify(data, null, 2)}\n`;
  let head: string[];
  let rows: string[][];
  if (Array.isArray(data)) ({ head, rows } = rowsOf(data, view, wide, opts));
  else {
    const one = rowsOf(data, view, true, opts);
    head = ['FIELD', 'VALUE'];
    rows = one.head.map((h, i) => [h, one.rows[0][i]]);
  }
  if (!opts.tty) return [head, ...rows].map((r) => `${r.map((c) => c.replace(/[\t\n]/g, ' ')).join('\t')}\n`).join('');
  if (rows.length === 0 && Array.isArray(data)) return `${paint(opts.colour, 'gray', 'No items.')}\n`;
  const { default: Table } = await import('cli-table3');
  const t = new Table({
    head: head.map((h) => paint(opts.colour, 'bold', h)),
    style: { head: [], border: opts.colour ? ['gray'] : [] },
  });
  t.push(...rows);
  return `${t.toString()}\n`;
}

export const formats: Record<string, Renderer> = {
  table: (d, v, o) => table(d, v, o, false),
  wide: (d, v, o) => table(d, v, o, true),
  // Indented for a person on a terminal; one line when piped, where a program reads it (and
  // a list can be the daemon's answer as it came, see jsonRead in cli/main.ts).
  json: (d, _view, opts) => `${opts.tty ? JSON.stringify(d, null, 2) : JSON.stringify(d)}\n`,
  yaml: async (d) => (await import('yaml')).stringify(d),
  ndjson: (d) => (Array.isArray(d) ? d : [d]).map((x) => `${JSON.stringify(x)}\n`).join(''),
};

/** The `-o` formats as a phrase ("table, wide, json, yaml or ndjson"): the one list for help and errors. */
export function formatList(): string {
  const names = Object.keys(formats);
  return `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

export function checkFormat(name: string): string {
  if (!Object.hasOwn(formats, name))
    throw new MonctlError('usage', `unknown output format "${name}" (one of ${formatList()})`, ExitCode.usage);
  return name;
}

export async function render(data: unknown, view: View | undefined, format: string, opts: RenderOptions): Promise<string> {
  return formats[checkFormat(format)](data, view, opts);
}
