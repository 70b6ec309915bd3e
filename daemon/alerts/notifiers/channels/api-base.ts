import type { Channel } from '../channel.ts';

/** What the channels of their own module share: a base URL checked and trimmed, an integer in a range, a provider's JSON answer. */
type Report = Parameters<Channel['check']>[2];

/**
 * An http(s) URL that an API path is appended to (`apiUrl`, a Gotify server), without its trailing
 * slashes; undefined after reporting why not. It is shown in reads, so it must not carry
 * credentials, and a query or fragment would end up in front of the path.
 */
export function baseUrl(value: string, field: string, err: Report): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    err(field, 'must be an absolute http:// or https:// URL');
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') err(field, `must be an http:// or https:// URL, not ${url.protocol}`);
  else if (url.username || url.password) err(field, 'must not carry credentials (reads show it; the secret fields hold them)');
  else if (url.search || url.hash) err(field, 'must not have a query or a fragment (the API path is appended to it)');
  else return value.replace(/\/+$/, '');
  return undefined;
}

/** `value` when it is an integer from `min` to `max` (a string such as "2" is refused: the API takes numbers); else reports it. */
export function integerIn(value: unknown, min: number, max: number, field: string, err: Report): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  err(field, `must be an integer from ${min} to ${max}`);
  return undefined;
}

/** A provider's answer (its first characters, as postJson read them) as a JSON object; undefined when it is not one. */
export function answerOf<T extends object>(text: string): Partial<T> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Partial<T>) : undefined;
  } catch {
    return undefined;
  }
}
