/**
 * Paged lists (`?limit=`, then each answer's `Link: <…>; rel="next"` until there is none), read
 * page by page so that a million resources are printed, or planned, as they arrive.
 */

/** Items per page the CLI asks for: the daemon's largest. */
export const PAGE_SIZE = 10_000;

type Get = (path: string) => Promise<{ text: string; headers: Record<string, string | string[] | undefined> }>;

/** The `rel="next"` target of a Link header, if any. */
export function nextLink(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header.join(',') : header;
  return value ? /<([^>]+)>\s*;\s*rel="next"/.exec(value)?.[1] : undefined;
}

/** Each page's JSON text (a bare array) from `path` on. */
export async function* pageTexts(get: Get, path: string, limit = PAGE_SIZE): AsyncGenerator<string> {
  let next: string | undefined = `${path}${path.includes('?') ? '&' : '?'}limit=${limit}`;
  while (next !== undefined) {
    const res = await get(next);
    yield res.text;
    next = nextLink(res.headers.link);
  }
}

/** Every item of a paged list, in order. */
export async function allPages<T>(get: Get, path: string, limit = PAGE_SIZE): Promise<T[]> {
  const out: T[] = [];
  for await (const text of pageTexts(get, path, limit)) for (const item of JSON.parse(text) as T[]) out.push(item);
  return out;
}

/** Writes the pages as the one JSON array the daemon would have sent whole: each page's array text spliced in, never parsed. */
export async function writeJsonPages(pages: AsyncIterable<string>, write: (text: string) => void): Promise<void> {
  let any = false;
  for await (const text of pages) {
    const inner = text.trim().slice(1, -1);
    if (inner === '') continue;
    write(`${any ? ',' : '['}${inner}`);
    any = true;
  }
  write(any ? ']\n' : '[]\n');
}
