import { problemFrom } from '../../src/client/api-client.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { VERSION } from '../../src/version.ts';
import { send } from '../api/transport.ts';
import { ops } from '../api/ops.ts';
import type { Runtime } from '../runtime.ts';

/**
 * Pings of a push check (docs/API.md#push-checks) for `monctl ping` and `monctl run`: where
 * to send them (a UUID needs no credential; a name is looked up through the admin API), and
 * sending one, with a bounded retry for `run`.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a ping says, as the URL's last segment: '' (success), start, fail, log, or an exit code. */
export type PingSuffix = '' | 'start' | 'fail' | 'log' | `${number}`;

/**
 * The ping URL of a push check named by UUID (the server the CLI talks to, no credential), by
 * its full ping URL, or by name or id (the admin view's URL, needs an ADMIN credential).
 */
export async function pingUrlOf(rt: Runtime, ref: string): Promise<string> {
  if (/^https?:\/\//i.test(ref)) return ref.replace(/\/+$/, '');
  if (UUID.test(ref)) return `${rt.conn.server}/ping/${ref.toLowerCase()}`;
  const list = await rt.client.call(ops.listAdminResources);
  const found = list.filter((r) => r.name === ref || String(r.id) === ref);
  if (found.length === 0) throw new MonctlError('not-found', `no resource named "${ref}"`, ExitCode.notFound);
  if (found.length > 1) throw new MonctlError('ambiguous', `several resources are named "${ref}": use the id or the UUID`);
  const push = found[0].push;
  if (!push) throw new MonctlError('usage', `resource "${ref}" is ${found[0].resourceType}, not a push check`, ExitCode.usage);
  return push.pingUrl.startsWith('/') ? `${rt.conn.server}${push.pingUrl}` : push.pingUrl;
}

export interface PingOptions {
  /** Attempts in all (1: no retry). */
  tries?: number;
  /** All attempts and their pauses end within this (each attempt's timeout shrinks to fit). */
  budgetMs?: number;
}

/** A ping the daemon refused (4xx): retrying would not help. */
export class PingRefused extends MonctlError {}

/** A 429's Retry-After in seconds, when it has one. */
const retryAfter = (headers: Record<string, string>) => {
  const s = Number(headers['retry-after']);
  return Number.isFinite(s) && s >= 0 ? s : undefined;
};

/**
 * POSTs one ping; resolves on 2xx. Connection failures, 5xx and 429 are retried within the
 * budget (a 429 after its Retry-After, when that fits); any other answer is a PingRefused.
 */
export async function sendPing(url: string, suffix: PingSuffix, body?: Buffer, opts: PingOptions = {}): Promise<void> {
  const tries = opts.tries ?? 1;
  const deadline = Date.now() + (opts.budgetMs ?? 30_000);
  const target = suffix === '' ? url : `${url}/${suffix}`;
  const headers = { 'user-agent': `monctl/${VERSION}`, accept: 'text/plain', 'content-type': 'text/plain; charset=utf-8' };
  let last: MonctlError | undefined;
  for (let attempt = 1; attempt <= tries; attempt++) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    let pause = attempt * 500;
    try {
      const res = await send('POST', target, headers, body ?? Buffer.alloc(0), left);
      if (res.status >= 200 && res.status < 300) return;
      const err = problemFrom(res.status, res.headers['content-type'], res.text);
      if (res.status === 429) {
        const after = retryAfter(res.headers);
        last = new MonctlError('rate-limited', `rate-limited (429)${after === undefined ? '' : `: retry in ${after} s`}`);
        if (after !== undefined) pause = after * 1000;
      } else if (res.status >= 500) last = err;
      else throw new PingRefused(err.code, `${res.status}: ${err.message}`, err.exitCode);
    } catch (err) {
      if (err instanceof PingRefused || !(err instanceof MonctlError)) throw err;
      last = err;
    }
    if (attempt < tries && Date.now() + pause < deadline) await new Promise((r) => setTimeout(r, pause));
    else if (attempt < tries) break;
  }
  throw last ?? new MonctlError('timeout', 'no time left to ping');
}
