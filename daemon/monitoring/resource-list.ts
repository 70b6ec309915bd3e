import type { ServerResponse } from 'node:http';
import { drained } from '../http/drained.ts';
import type { Selectable } from 'kysely';
import type { ResourcesTable } from '../store/schema.ts';

type Row = Selectable<ResourcesTable>;
/** Up to `limit` rows with ids above `after`, by id. */
export type ReadPage = (after: number, limit: number) => Promise<Row[]>;
/** Renders rows; `all` is true when they are every row the list has (no `IN` list needed to read around them). */
export type Render<T = unknown> = (rows: Row[], all: boolean) => T[] | Promise<T[]>;

/** Rows per keyset read of a whole list; a list no longer than this is answered (and cached) in one piece. */
export const LIST_CHUNK = 1000;

/** A whole list longer than one chunk: the handler streams it from these first rows instead of caching it. */
export class LongList extends Error {
  readonly rows: Row[];
  constructor(rows: Row[]) {
    super('list longer than one chunk');
    this.rows = rows;
  }
}

/**
 * One page of `limit` items after id `after` (docs/API.md#resources): the seed's bare array, and
 * `Link: <path?limit=&after=>; rel="next"` while more remain, as the history pages say it.
 */
export async function listPage<T>(
  res: ServerResponse,
  path: string,
  query: { limit: number; after?: number },
  read: ReadPage,
  render: Render<T>,
): Promise<T[]> {
  const after = query.after ?? 0;
  const rows = await read(after, query.limit + 1);
  const more = rows.length > query.limit;
  if (more) {
    rows.pop();
    res.setHeader('Link', `<${path}?limit=${query.limit}&after=${rows[rows.length - 1].id}>; rel="next"`);
  }
  return render(rows, after === 0 && !more);
}

/**
 * The whole list after id `after` (every id when 0): answered in one piece up to `LIST_CHUNK`
 * items, else streamed.
 */
export async function wholeList<T>(res: ServerResponse, after: number, read: ReadPage, render: Render<T>): Promise<T[]> {
  const first = await read(after, LIST_CHUNK + 1);
  if (first.length <= LIST_CHUNK) return render(first, after === 0);
  await streamList(res, first, read, render);
  return undefined as never; // sent: the binder writes nothing after headers
}

/**
 * Writes the whole list as one JSON array, reading `LIST_CHUNK` rows at a time by id from
 * `first` on and waiting for the socket to drain between chunks: a million resources never sit
 * in memory as one array or one string. A reader that goes away ends the reads.
 */
export async function streamList(res: ServerResponse, first: Row[], read: ReadPage, render: Render): Promise<void> {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  let rows = first;
  let separator = '[';
  try {
    for (;;) {
      const more = rows.length > LIST_CHUNK;
      const chunk = more ? rows.slice(0, LIST_CHUNK) : rows;
      let text = '';
      for (const item of await render(chunk, false)) {
        text += separator + JSON.stringify(item);
        separator = ',';
      }
      if (!res.write(text)) await drained(res);
      if (res.destroyed || !more) break;
      rows = await read(chunk[chunk.length - 1].id, LIST_CHUNK + 1);
    }
    if (!res.destroyed) res.end(separator === '[' ? '[]' : ']');
  } catch (err) {
    // The status is sent: a cut body is all that can tell the client.
    res.destroy(err as Error);
  }
}
