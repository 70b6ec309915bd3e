import type { Command } from 'commander';
import type { Route, RouteSsoInput } from '../../src/api/schemas/tunnel.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { parseGoDuration } from '../../src/probes/conditions/go-values.ts';

/** The sign-in flags of `routes add|update` (`--auth oidc`, docs/API.md#route-sign-in). */
export interface SsoFlags {
  ssoEmail?: string[];
  ssoDomain?: string[];
  ssoGroup?: string[];
  ssoSession?: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function withSsoFlags(cmd: Command): Command {
  return cmd
    .option('--sso-email <email>', 'HTTP, --auth oidc: admit this verified email (repeatable; "" for none)', collect)
    .option(
      '--sso-domain <domain>',
      'HTTP, --auth oidc: admit verified emails of this domain; "*" admits every account (repeatable)',
      collect,
    )
    .option('--sso-group <group>', 'HTTP, --auth oidc: admit members of this group (--oidc-groups-claim; repeatable)', collect)
    .option(
      '--sso-session <duration>',
      'HTTP, --auth oidc: how long a sign-in lasts (30m, 12h, 7d); "default": the daemon\'s --route-session',
    );
}

export const wantsSso = (f: SsoFlags) =>
  f.ssoEmail !== undefined || f.ssoDomain !== undefined || f.ssoGroup !== undefined || f.ssoSession !== undefined;

/** `7d`, or a Go duration (`90m`, `12h`, `1h30m`), in whole seconds; `default` is null. */
export function parseSsoSession(text: string): number | null {
  const t = text.trim();
  if (t.toLowerCase() === 'default') return null;
  const days = /^(\d{1,3})d$/.exec(t);
  const ms = days ? Number(days[1]) * 86_400_000 : parseGoDuration(t);
  if (ms === null || ms < 60_000)
    throw new MonctlError(
      'usage',
      `--sso-session must be a duration of a minute or more (30m, 12h, 7d) or default, not "${text}"`,
      ExitCode.usage,
    );
  return Math.floor(ms / 1000);
}

/** A repeated flag's values; one empty value empties the list. */
const values = (given: string[] | undefined) => (given === undefined ? undefined : given.filter((v) => v.trim() !== ''));

/** The `sso` field of a route body: the lists given replace the route's, the others are kept by the daemon. */
export function ssoBody(f: SsoFlags): RouteSsoInput | undefined {
  if (!wantsSso(f)) return undefined;
  const body: RouteSsoInput = {};
  const emails = values(f.ssoEmail);
  const domains = values(f.ssoDomain);
  const groups = values(f.ssoGroup);
  if (emails) body.emails = emails;
  if (domains) body.domains = domains;
  if (groups) body.groups = groups;
  if (f.ssoSession !== undefined) body.sessionTtl = parseSsoSession(f.ssoSession);
  return body;
}

/** `emails a@x; domains x.com; groups ops; session 12h`, or `-`. */
export function ssoCell(r: Route): string {
  const sso = r.sso;
  if (!sso) return '-';
  const parts = [
    sso.emails.length ? `emails ${sso.emails.join(',')}` : '',
    sso.domains.length ? `domains ${sso.domains.join(',')}` : '',
    sso.groups.length ? `groups ${sso.groups.join(',')}` : '',
    `session ${sso.sessionTtl === null ? 'default' : `${sso.sessionTtl}s`}`,
  ];
  return parts.filter(Boolean).join('; ');
}
