import type { PushView } from '../../src/api/schemas/push.ts';
import { MAX_PERIOD_SECONDS, SLUG_RE } from '../../src/api/schemas/push.ts';

/**
 * The schedule of a `resources:` entry of type PUSH (docs/API.md#push-checks): `periodSeconds`
 * or `cron` (with `timezone`), and `graceSeconds`, as the API names them; `target` is the slug.
 * Fields left out are not managed; a period replaces a cron expression and the other way round.
 */
export interface PushSpec {
  periodSeconds?: number;
  cron?: string;
  timezone?: string;
  graceSeconds?: number;
}

type Obj = Record<string, unknown>;
type Err = (path: string, msg: string) => void;

const SCHEDULE_KEYS = ['periodSeconds', 'cron', 'timezone', 'graceSeconds'] as const;
/** What a push check refuses: it is not probed (the daemon says 400; the file says it before any write). */
const PROBE_KEYS = ['intervalSeconds', 'locations', 'quorum', 'skipTLS', 'recursive', 'timeoutSeconds'];

const seconds = (v: unknown, min: number) => Number.isInteger(v) && (v as number) >= min && (v as number) <= MAX_PERIOD_SECONDS;

export function validatePush(p: string, r: Obj, type: string | undefined, target: string | undefined, err: Err): PushSpec | undefined {
  if (type !== 'PUSH') {
    for (const k of SCHEDULE_KEYS) if (r[k] !== undefined) err(`${p}.${k}`, 'is for PUSH resources');
    return undefined;
  }
  for (const k of PROBE_KEYS)
    if (r[k] !== undefined) err(`${p}.${k}`, 'is not for PUSH resources: they are not probed, they wait for pings');
  if (target !== undefined && !SLUG_RE.test(target)) err(`${p}.target`, 'must be a slug for PUSH: lower-case letters, digits, - and _');
  const spec: PushSpec = {};
  if (r.periodSeconds !== undefined && r.cron !== undefined) err(`${p}.cron`, 'give periodSeconds or cron, not both');
  if (r.periodSeconds !== undefined) {
    if (!seconds(r.periodSeconds, 10)) err(`${p}.periodSeconds`, `must be an integer from 10 to ${MAX_PERIOD_SECONDS}`);
    spec.periodSeconds = r.periodSeconds as number;
  }
  if (r.cron !== undefined) {
    if (typeof r.cron !== 'string' || r.cron.trim().split(/\s+/).length < 5) err(`${p}.cron`, "must be a cron expression: '0 3 * * *'");
    spec.cron = r.cron as string;
  }
  if (r.timezone !== undefined) {
    if (typeof r.timezone !== 'string' || r.timezone === '') err(`${p}.timezone`, 'must be an IANA time zone: Europe/Berlin');
    if (r.cron === undefined) err(`${p}.timezone`, 'is the time zone of cron: give cron too');
    spec.timezone = r.timezone as string;
  }
  if (r.graceSeconds !== undefined) {
    if (!seconds(r.graceSeconds, 0)) err(`${p}.graceSeconds`, `must be an integer from 0 to ${MAX_PERIOD_SECONDS}`);
    spec.graceSeconds = r.graceSeconds as number;
  }
  return spec;
}

/** What differs from the daemon's push view (names for the plan) and the PATCH that makes it match. */
export function pushDiff(spec: PushSpec | undefined, cur: PushView | null | undefined): { changes: string[]; patch: Obj } {
  const changes: string[] = [];
  const patch: Obj = {};
  if (!spec || !cur) return { changes, patch };
  if (spec.periodSeconds !== undefined && spec.periodSeconds !== cur.periodSeconds) {
    changes.push('periodSeconds');
    Object.assign(patch, { periodSeconds: spec.periodSeconds, cron: null });
  }
  if (spec.cron !== undefined && spec.cron !== cur.cron) {
    changes.push('cron');
    Object.assign(patch, { cron: spec.cron, periodSeconds: null });
  }
  if (spec.timezone !== undefined && spec.timezone !== cur.timezone) {
    changes.push('timezone');
    patch.timezone = spec.timezone;
  }
  if (spec.graceSeconds !== undefined && spec.graceSeconds !== cur.graceSeconds) {
    changes.push('graceSeconds');
    patch.graceSeconds = spec.graceSeconds;
  }
  return { changes, patch };
}
