import type { LiveRoute } from './route-table.ts';

/**
 * Header and path rules of HTTP routes (docs/API.md#header-and-path-rules).
 * PLACEHOLDER of the groundwork: nothing is changed yet; the header-rules owner replaces this file
 * (and may split it into a folder), keeping these two entry points the edge calls.
 */

/** The path (and query) the target gets, before the target URL's base path is put in front. */
export function forwardPath(_route: LiveRoute, path: string): string {
  return path;
}

/** The response's raw header list ([name, value, …]) as the client gets it. */
export function responseHeaders(_route: LiveRoute, raw: string[]): string[] {
  return raw;
}
