import type { ServerResponse } from 'node:http';

/**
 * `Vary` naming `names` and whatever the response already varies on (the
 * CORS middleware's `Origin` first of all): a handler that replaced it would
 * let a shared cache hand one origin's `Access-Control-Allow-Origin` to
 * another. Names compare case-insensitively; `*` stays alone.
 */
export function varyWith(res: ServerResponse, names: string): string {
  const before = res.getHeader('Vary');
  const listed = [before ?? '']
    .flat()
    .join(',')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const all = [...listed];
  for (const name of names
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean)) {
    if (!all.some((n) => n.toLowerCase() === name.toLowerCase())) all.push(name);
  }
  return all.includes('*') ? '*' : all.join(', ');
}
