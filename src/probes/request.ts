import type { Dispatcher } from 'undici';

/**
 * One request to a URL through `dispatcher`: undici's top-level `request()`
 * without the package's entry module, which also loads fetch, WebSocket,
 * caches and mocks. The agent bundles only the dispatcher (scripts/bundle.ts).
 */
export function requestUrl(
  dispatcher: Dispatcher,
  url: string,
  opts: { method: 'GET' | 'HEAD'; headers: Record<string, string>; signal: AbortSignal },
): Promise<Dispatcher.ResponseData> {
  const u = new URL(url);
  return dispatcher.request({ origin: u.origin, path: `${u.pathname}${u.search}`, ...opts });
}
