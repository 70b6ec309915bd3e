import { writeJsonPages } from '../api/pages.ts';
import type { RenderOptions, View } from './render.ts';

/**
 * Prints a paged list as its pages arrive where the format allows it: piped JSON as the one
 * array the daemon would have sent whole (each page's array text spliced in), NDJSON, YAML and a
 * piped table (its header once) page by page. A table or indented JSON on a terminal, for a
 * person, is drawn once from every page.
 */
export async function printPages(
  pages: AsyncIterable<string>,
  view: View | undefined,
  format: string,
  opts: RenderOptions,
  write: (text: string) => void = (t) => process.stdout.write(t),
): Promise<void> {
  // Loaded only when something is rendered: piped JSON, the quick path's usual case, splices text.
  const render = async (...args: Parameters<typeof import('./render.ts').render>) => (await import('./render.ts')).render(...args);
  const streamed = format === 'ndjson' || format === 'yaml' || (!opts.tty && ['json', 'table', 'wide'].includes(format));
  if (!streamed) {
    const all: unknown[] = [];
    for await (const text of pages) for (const item of JSON.parse(text) as unknown[]) all.push(item);
    return write(await render(all, view, format, opts));
  }
  if (format === 'json') return writeJsonPages(pages, write);
  let first = true;
  for await (const text of pages) {
    const items = JSON.parse(text) as unknown[];
    if (!first && items.length === 0) continue;
    let out = await render(items, view, format, opts);
    // A piped table's header line comes once; a YAML page adds its items to the one sequence.
    if (!first && (format === 'table' || format === 'wide')) out = out.slice(out.indexOf('\n') + 1);
    write(out);
    first = false;
  }
}
