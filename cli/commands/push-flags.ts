import type { Command } from 'commander';
import { MAX_PERIOD_SECONDS, SLUG_RE } from '../../src/api/schemas/push.ts';
import { usage } from '../../src/errors.ts';
import { parseGoDuration } from '../../src/probes/conditions/go-values.ts';
import type { FlagNames } from '../api/flag-errors.ts';

/**
 * The schedule flags of a push check (docs/API.md#push-checks) for `resources add --push` and
 * `resources update`, checked before any request: a period or a cron expression (not both), a
 * time zone for the cron expression only, a grace time, and the slug (the resource's `target`).
 */
export interface PushFlags {
  push?: boolean;
  period?: string;
  cron?: string;
  tz?: string;
  grace?: string;
  slug?: string;
}

export const PUSH_FLAG_NAMES: FlagNames = {
  periodSeconds: '--period',
  cron: '--cron',
  timezone: '--tz',
  graceSeconds: '--grace',
};

/** The schedule flags; `add` also takes `--push` (a type cannot be changed by update). */
export function pushFlags(cmd: Command, update = false): Command {
  if (!update) cmd.option('--push', 'a push check: monctl waits for pings from a job (cron, backup, CI) instead of checking');
  return cmd
    .option('--period <duration>', 'PUSH: a ping is expected this often: 1d, 12h, 90m or seconds (default 1d; not with --cron)')
    .option('--cron <expression>', "PUSH: a ping is expected at each time of this cron expression, e.g. '0 3 * * *'")
    .option('--tz <zone>', 'PUSH: the IANA time zone of --cron, e.g. Europe/Berlin (default UTC)')
    .option('--grace <duration>', 'PUSH: how late a ping may be before the check is NOT_AVAILABLE: 30m, 1h (default 1h)')
    .option('--slug <slug>', 'PUSH: its slug for /ping/{pingKey}/{slug}: a-z 0-9 - _ (default made from the name)');
}

const DAY_S = 86_400;

/**
 * A duration in the CLI's usual syntax (Go's, as `--timeout` takes it: `90s`, `1h30m`), with
 * days and weeks added because schedules are counted in them (`1d`, `1w2d`), or a bare number
 * of seconds. Whole seconds only; null when it is none of these.
 */
export function parseSeconds(text: string): number | null {
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t);
  const m = /^(?:(\d+)w)?(?:(\d+)d)?(.*)$/.exec(t);
  if (!m || (!m[1] && !m[2] && !m[3])) return null;
  const rest = m[3] === '' ? 0 : parseGoDuration(m[3]);
  if (rest === null || rest < 0 || rest % 1000 !== 0 || m[3].startsWith('-') || m[3].startsWith('+')) return null;
  return Number(m[1] ?? 0) * 7 * DAY_S + Number(m[2] ?? 0) * DAY_S + rest / 1000;
}

function seconds(flag: string, text: string, min: number): number {
  const s = parseSeconds(text);
  if (s === null || s < min || s > MAX_PERIOD_SECONDS)
    usage(`${flag} must be a duration of whole seconds from ${min}s to 365d (1d, 12h, 1h30m, 90s, or seconds), not "${text}"`);
  return s;
}

/** True when any schedule flag (or --push) was given. */
export const hasPushFlags = (f: PushFlags) => Boolean(f.push) || [f.period, f.cron, f.tz, f.grace, f.slug].some((x) => x !== undefined);

/**
 * The schedule fields the flags make. On update, a period replaces a cron expression and the
 * other way round (PATCH's null removes the other, as docs/API.md#push-checks says).
 */
export function pushBody(f: PushFlags, update: boolean): Record<string, unknown> {
  if (f.period !== undefined && f.cron !== undefined) usage('give --period or --cron, not both');
  if (f.tz !== undefined && f.cron === undefined && !update) usage('--tz is the time zone of --cron: give --cron too');
  if (f.cron !== undefined && f.cron.trim().split(/\s+/).length < 5)
    usage(`--cron needs 5 to 7 fields (minute hour day month weekday), e.g. '0 3 * * *', not "${f.cron}"`);
  if (f.slug !== undefined && !SLUG_RE.test(f.slug))
    usage(`--slug must be lower-case letters, digits, - and _ (at most 100, starting and ending with a letter or digit), not "${f.slug}"`);
  const body: Record<string, unknown> = {};
  if (f.period !== undefined) {
    body.periodSeconds = seconds('--period', f.period, 10);
    if (update) body.cron = null;
  }
  if (f.cron !== undefined) {
    body.cron = f.cron.trim();
    if (update) body.periodSeconds = null;
  }
  if (f.tz !== undefined) body.timezone = f.tz;
  if (f.grace !== undefined) body.graceSeconds = seconds('--grace', f.grace, 0);
  if (f.slug !== undefined) body.target = f.slug;
  return body;
}

/**
 * The flags that make no sense on a push check, which is never probed; refused here (exit 2)
 * rather than by the daemon's 400 after the secrets were asked for.
 */
export const NOT_FOR_PUSH: Record<string, string> = {
  interval: '--interval',
  target: '--target (a push check has a --slug)',
  location: '--location',
  quorum: '--quorum',
  skipTls: '--skip-tls',
  recursive: '--recursive',
  method: '--method',
  header: '--header',
  secretHeader: '--secret-header',
  body: '--body',
  contentType: '--content-type',
  basicAuth: '--basic-auth',
  bearerTokenFile: '--bearer-token-file',
  clientCert: '--client-cert',
  clientKey: '--client-key',
  timeout: '--timeout',
  expectStatus: '--expect-status',
  followRedirects: '--follow-redirects',
};

/** A usage error naming the first flag a push check does not take. */
export function refuseProbeFlags(f: Record<string, unknown>): void {
  for (const [key, flag] of Object.entries(NOT_FOR_PUSH))
    if (f[key] !== undefined) usage(`--push does not take ${flag}: a push check is not probed, it waits for pings`);
}
