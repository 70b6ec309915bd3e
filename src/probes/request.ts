import type { Dispatcher } from 'undici';
import { VERSION } from '../version.ts';
import type { HttpMethod, HttpRequestSpec } from './types.ts';

/** The seed's request headers, built once: a check without a request spec allocates none. */
const SEED_HEADERS: Record<string, string> = { 'user-agent': `monctl/${VERSION}`, accept: '*/*' };

export interface RequestOptions {
  method: HttpMethod;
  headers: Record<string, string> | string[];
  signal: AbortSignal;
  body?: string | null;
  /** 0: the first answer is the answer, even a redirect (the redirect interceptor passes it by). */
  maxRedirections?: number;
  headersTimeout?: number;
  bodyTimeout?: number;
}

/**
 * One request to a URL through `dispatcher`: undici's top-level `request()`
 * without the package's entry module, which also loads fetch, WebSocket,
 * caches and mocks. The agent bundles only the dispatcher (scripts/bundle.ts).
 */
export function requestUrl(dispatcher: Dispatcher, url: string, opts: RequestOptions): Promise<Dispatcher.ResponseData> {
  const u = new URL(url);
  return dispatcher.request({ origin: u.origin, path: `${u.pathname}${u.search}`, ...opts });
}

/**
 * The method, headers and body of an HTTP check (docs/DECISIONS.md#probe-requests). No spec: the
 * seed's GET. With one: the seed's user-agent and accept unless the spec names them, then the
 * spec's headers in order, the auth header, and the body's content type (text/plain when none is
 * given) unless a header already sets it. Headers go as a flat list so that order and repeated
 * names survive.
 */
export function checkRequest(spec: HttpRequestSpec | undefined): Pick<RequestOptions, 'method' | 'headers' | 'body' | 'maxRedirections'> {
  if (!spec) return { method: 'GET', headers: SEED_HEADERS };
  const named = new Set(spec.headers.map(([name]) => name.toLowerCase()));
  const flat: string[] = [];
  for (const [name, value] of Object.entries(SEED_HEADERS)) if (!named.has(name)) flat.push(name, value);
  for (const [name, value] of spec.headers) flat.push(name, value);
  if (spec.auth && !named.has('authorization')) flat.push('authorization', authorization(spec.auth));
  // A HEAD request has no body; any other method sends the one given (some APIs read a GET body).
  const sendsBody = spec.body !== null && spec.method !== 'HEAD';
  if (sendsBody && !named.has('content-type')) flat.push('content-type', spec.contentType ?? 'text/plain');
  return {
    method: spec.method,
    headers: flat,
    body: sendsBody ? spec.body : null,
    ...(spec.followRedirects ? {} : { maxRedirections: 0 }),
  };
}

function authorization(auth: NonNullable<HttpRequestSpec['auth']>): string {
  if (auth.type === 'bearer') return `Bearer ${auth.token}`;
  return `Basic ${Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64')}`;
}
