import type { Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { VERSION } from '../../version.ts';
import { requestUrl } from '../request.ts';

/** One registry HTTP exchange, body read (bounded) only when asked for. */
export interface RegistryResponse {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  body?: Buffer;
}

/** Manifests are at most 4 MiB by the distribution spec; token and catalog answers are far smaller. */
const MAX_BODY = 4 * 1024 * 1024;

export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export async function send(
  dispatcher: Dispatcher,
  url: string,
  method: 'GET' | 'HEAD',
  headers: Record<string, string>,
  timeoutMs: number,
  readBody: boolean,
): Promise<RegistryResponse> {
  const controller = new AbortController();
  const { signal } = controller;
  const timer = setTimeout(() => controller.abort(new Error(`timeout after ${timeoutMs} ms`)), timeoutMs);
  try {
    return await exchange(dispatcher, url, method, headers, readBody, signal);
  } finally {
    clearTimeout(timer);
  }
}

async function exchange(
  dispatcher: Dispatcher,
  url: string,
  method: 'GET' | 'HEAD',
  headers: Record<string, string>,
  readBody: boolean,
  signal: AbortSignal,
): Promise<RegistryResponse> {
  const res = await requestUrl(dispatcher, url, { method, headers: { 'user-agent': `monctl/${VERSION}`, ...headers }, signal });
  let body: Buffer | undefined;
  if (readBody && method === 'GET') {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += chunk.length;
      if (size > MAX_BODY) {
        res.body.destroy();
        throw new Error(`response body over ${MAX_BODY} bytes`);
      }
      chunks.push(chunk);
    }
    body = Buffer.concat(chunks);
  } else {
    await res.body.dump({ limit: 64 * 1024, signal }).catch(() => undefined);
  }
  return { status: res.statusCode, statusText: res.statusText, headers: res.headers, body };
}

export function statusLine(res: RegistryResponse): string {
  return `${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
}

/** Parses `Bearer realm="…",service="…"` into its scheme and parameters. */
export function parseChallenge(value: string | undefined): { scheme: string; params: Record<string, string> } | undefined {
  if (!value) return undefined;
  const m = /^\s*(\w+)\s*(.*)$/.exec(value);
  if (!m) return undefined;
  const params: Record<string, string> = {};
  for (const p of m[2].matchAll(/(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g)) params[p[1].toLowerCase()] = p[2] ?? p[3] ?? '';
  return { scheme: m[1].toLowerCase(), params };
}

/** The `rel="next"` target of a `Link` header, resolved against `base`. */
export function nextLink(value: string | undefined, base: string): string | undefined {
  if (!value) return undefined;
  for (const part of value.split(',')) {
    const m = /<([^>]+)>\s*;(.*)$/.exec(part.trim());
    if (m && /rel\s*=\s*"?next"?/.test(m[2])) return new URL(m[1], base).toString();
  }
  return undefined;
}
