import { domainToASCII } from 'node:url';
import { RouteSsoInput, type RouteSso } from '../../src/api/schemas/tunnel.ts';
import { parseSsoSession } from '../commands/route-sso-flags.ts';

type Err = (path: string, msg: string) => void;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const LISTS = ['emails', 'domains', 'groups'] as const;

/**
 * A route's `sso:` in an apply file: the whole rules (a list left out is empty), so that the file
 * says who may sign in; sessionTtl in seconds or as a duration (`12h`, `7d`). The daemon
 * normalises and checks the values themselves (400 naming the field).
 */
export function ssoSpec(p: string, v: unknown, err: Err): RouteSso | null | undefined {
  if (v === null) return null;
  if (!isObj(v)) {
    err(p, 'must be {emails, domains, groups, sessionTtl} or null');
    return undefined;
  }
  for (const k of Object.keys(v))
    if (![...LISTS, 'sessionTtl'].includes(k)) err(`${p}.${k}`, 'unknown field (emails, domains, groups, sessionTtl)');
  const spec: RouteSso = { emails: [], domains: [], groups: [], sessionTtl: null };
  for (const k of LISTS) {
    const list = v[k];
    if (list === undefined) continue;
    const item = RouteSsoInput.properties[k];
    if (!Array.isArray(list) || list.length > (item.maxItems ?? 100) || list.some((x) => typeof x !== 'string' || x.trim() === ''))
      err(`${p}.${k}`, `must be a list of at most ${item.maxItems} non-empty strings`);
    else spec[k] = list as string[];
  }
  const ttl = v.sessionTtl;
  if (typeof ttl === 'string') {
    try {
      spec.sessionTtl = parseSsoSession(ttl);
    } catch (e) {
      err(`${p}.sessionTtl`, (e as Error).message.replace('--sso-session', 'sessionTtl'));
    }
  } else if (typeof ttl === 'number') {
    if (!Number.isInteger(ttl) || ttl < 60) err(`${p}.sessionTtl`, 'must be whole seconds, 60 or more, or a duration such as 12h');
    else spec.sessionTtl = ttl;
  } else if (ttl !== undefined && ttl !== null) err(`${p}.sessionTtl`, 'must be seconds, a duration such as 12h, or null');
  return spec;
}

/** The values as the daemon stores them, to compare: lower-case, no `@`, IDNA domains, as sets. */
const emailKey = (e: string) => {
  const t = e.trim().toLowerCase();
  const at = t.lastIndexOf('@');
  return at < 0 ? t : `${t.slice(0, at)}@${domainToASCII(t.slice(at + 1)) || t.slice(at + 1)}`;
};
const domainKey = (d: string) => {
  const t = d.trim().toLowerCase().replace(/^@/, '');
  return t === '*' ? t : domainToASCII(t) || t;
};
const set = (list: string[], key: (s: string) => string) => JSON.stringify([...new Set(list.map(key))].sort());

/** Whether the file's rules are the route's (null and none alike). */
export function sameSso(file: RouteSso | null, current: RouteSso | null): boolean {
  if (!file || !current) return !file === !current;
  return (
    set(file.emails, emailKey) === set(current.emails, emailKey) &&
    set(file.domains, domainKey) === set(current.domains, domainKey) &&
    set(file.groups, (g) => g.trim()) === set(current.groups, (g) => g.trim()) &&
    file.sessionTtl === current.sessionTtl
  );
}
