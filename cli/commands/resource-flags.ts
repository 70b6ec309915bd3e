import type { Static } from '@sinclair/typebox';
import type { Command } from 'commander';
import { RESOURCE_TYPES } from '../../src/api/kinds.ts';
import type { ResourceCreate, ResourcePatch } from '../../src/api/schemas/monitoring.ts';
import { usage } from '../../src/errors.ts';
import { QUORUMS } from '../../src/probes/quorum.ts';
import { SEVERITIES, type Severity } from '../../src/notifier-fields.ts';
import type { FlagNames } from '../api/flag-errors.ts';
import { ops } from '../api/ops.ts';
import { type Runtime, resolveRef } from '../runtime.ts';
import { CHECK_OPTION_FLAG_NAMES, type CheckOptionFlags, checkOptionFlags, checkOptionsBody } from './check-option-flags.ts';
import { HTTP_CHECK_FLAG_NAMES, type HttpCheckFlags, httpCheckBody, httpCheckFlags } from './http-check-flags.ts';
import { offerValues } from './completion-values.ts';
import { hasPushFlags, PUSH_FLAG_NAMES, type PushFlags, pushBody, refuseProbeFlags } from './push-flags.ts';

/**
 * Every flag of `resources add` (and `update`, which adds ways to remove), and the one function
 * that turns them into a request body: `resources add`, `update` and `test` share them, so the
 * three take the same flags and say the same things about bad ones.
 */
export interface ResourceFlags extends HttpCheckFlags, PushFlags, CheckOptionFlags {
  type?: string;
  target?: string;
  interval?: string;
  group?: string[];
  /** update's `--no-groups`: false when given. */
  groups?: boolean;
  skipTls?: boolean;
  recursive?: boolean;
  active?: boolean;
  inactive?: boolean;
  name?: string;
  failureThreshold?: string;
  successThreshold?: string;
  location?: string[];
  quorum?: string;
  condition?: string[];
  /** update's `--no-conditions`: false when given. */
  conditions?: boolean;
  severity?: string;
  /** `--depends-on a,b` (repeatable); `--depends-on ''` gives [''], which removes them all. */
  dependsOn?: string[];
}

export type ResourceBody = Static<typeof ResourcePatch>;
export type ResourceCreateBody = Static<typeof ResourceCreate>;

/** The daemon's fields as `resources add/update/test` name them (a 400 names the flag the user typed). */
export const RESOURCE_FLAG_NAMES: FlagNames = {
  resourceType: '--type',
  target: '--target',
  intervalSeconds: '--interval',
  groupIds: '--group',
  skipTLS: '--skip-tls',
  recursive: '--recursive',
  failureThreshold: '--failure-threshold',
  successThreshold: '--success-threshold',
  locations: '--location',
  quorum: '--quorum',
  conditions: '--condition',
  severity: '--severity',
  dependsOn: '--depends-on',
  ...HTTP_CHECK_FLAG_NAMES,
  ...PUSH_FLAG_NAMES,
  ...CHECK_OPTION_FLAG_NAMES,
};

const collect = (value: string, previous: string[] = []) => [...previous, value];
/** Comma-separated names, repeatable; '' stays an empty entry so that `--depends-on ''` can mean none. */
const collectNames = (value: string, previous: string[] = []) => [...previous, ...value.split(',').map((s) => s.trim())];

/** The flags `resources add` takes (`update` passes true for its removals too). */
export function resourceFlags(cmd: Command, update = false): Command {
  cmd
    .option('--type <type>', `${RESOURCE_TYPES.join(', ')} (PUSH: see --push)`)
    .option(
      '--target <target>',
      'URL (HTTP), host:port (TCP, TLS, UDP, GRPC, SSH), image reference (DOCKER), name (DNS), host (PING) or ws(s):// URL (WEBSOCKET)',
    )
    .option('--interval <seconds>', 'seconds between checks (10 to 86400)')
    .option('--group <group>', 'group id or name (repeatable)', collect)
    .option('--skip-tls', 'accept self-signed certificates')
    .option('--no-skip-tls', 'verify certificates')
    .option('--recursive', 'DOCKER: check every repository under a namespace')
    .option('--no-recursive', 'not recursive')
    .option('--active', 'checked on schedule')
    .option('--inactive', 'not checked')
    .option('--failure-threshold <n>', 'consecutive failed checks that open an incident (1 to 100, default 3)')
    .option('--success-threshold <n>', 'consecutive good checks that resolve it (1 to 100, default 1)')
    .option('--location <location>', 'where to check it: daemon, or an agent name or id (repeatable; default daemon)', collect)
    .option('--quorum <quorum>', `how the locations decide: ${QUORUMS.join(', ')} (default majority)`)
    .option(
      '--condition <condition>',
      "what up means, in Gatus's syntax: '[BODY].status == UP' (repeatable, all must hold; replaces the list)",
      collect,
    )
    .option('--severity <severity>', `how much its failure matters: ${SEVERITIES.join(', ')} (default critical); alert rules match on it`)
    .option(
      '--depends-on <resources>',
      "resources it depends on, names or ids (repeatable or comma-separated; replaces the list, '' removes it): their incidents hold its alerts back",
      collectNames,
    );
  offerValues(cmd, '--severity', SEVERITIES);
  return checkOptionFlags(httpCheckFlags(cmd, update), update);
}

/** A whole number within bounds, or a usage error naming the flag (the daemon checks too, but would name the field). */
function integer(flag: string, text: string, min: number, max: number, what: string): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) usage(`${flag} must be ${what}, not "${text}"`);
  return Number(text);
}

/** The names and ids of `--depends-on`, ids as numbers (the API takes both); `''` alone is none. */
function dependsOnOf(refs: string[]): Array<number | string> {
  return refs.filter(Boolean).map((r) => (/^\d+$/.test(r) ? Number(r) : r));
}

/** `--type`, checked before any request: the daemon's 400 would name `resourceType` and exit 1. */
export function resourceType(text: string): (typeof RESOURCE_TYPES)[number] {
  const type = text.toUpperCase();
  if (!(RESOURCE_TYPES as readonly string[]).includes(type)) usage(`--type must be one of ${RESOURCE_TYPES.join(', ')}, not "${text}"`);
  return type as (typeof RESOURCE_TYPES)[number];
}

export const groupIds = (rt: Runtime, refs: string[]) =>
  Promise.all(
    refs.map((g) =>
      resolveRef(
        g,
        'group',
        () => rt.client.call(ops.listGroups),
        (x) => x.name,
      ),
    ),
  );

/**
 * The body the flags make, secrets read in; fields not given are left out (`update`: PATCH's nulls
 * for a schedule's other half). `storedType`: update's resource type when `--type` is not given.
 */
export async function resourceBody(rt: Runtime, f: ResourceFlags, update = false, storedType?: string): Promise<ResourceBody> {
  if (f.push) refuseProbeFlags(f as Record<string, unknown>);
  const push = pushBody(f, update);
  const body: ResourceBody = {};
  if (f.name) body.name = f.name;
  if (f.type) body.resourceType = resourceType(f.type);
  if (f.target) body.target = f.target;
  if (f.interval !== undefined) body.intervalSeconds = integer('--interval', f.interval, 0, Number.MAX_SAFE_INTEGER, 'a number of seconds');
  if (f.group && f.groups === false) usage('give --group or --no-groups, not both');
  if (f.skipTls !== undefined) body.skipTLS = f.skipTls;
  if (f.recursive !== undefined) body.recursive = f.recursive;
  if (f.active) body.active = true;
  if (f.inactive) body.active = false;
  if (f.failureThreshold !== undefined)
    body.failureThreshold = integer('--failure-threshold', f.failureThreshold, 1, 100, 'a number from 1 to 100');
  if (f.successThreshold !== undefined)
    body.successThreshold = integer('--success-threshold', f.successThreshold, 1, 100, 'a number from 1 to 100');
  if (f.location) body.locations = f.location;
  if (f.condition && f.conditions === false) usage('give --condition or --no-conditions, not both');
  if (f.condition) body.conditions = f.condition;
  if (f.conditions === false) body.conditions = [];
  if (f.severity !== undefined) {
    const sev = f.severity.toLowerCase();
    if (!(SEVERITIES as readonly string[]).includes(sev)) usage(`--severity must be one of ${SEVERITIES.join(', ')}, not "${f.severity}"`);
    body.severity = sev as Severity;
  }
  if (f.dependsOn !== undefined) body.dependsOn = dependsOnOf(f.dependsOn);
  if (f.quorum !== undefined) {
    const q = f.quorum.toLowerCase();
    if (!(QUORUMS as readonly string[]).includes(q)) usage(`--quorum must be one of ${QUORUMS.join(', ')}, not "${f.quorum}"`);
    body.quorum = q as (typeof QUORUMS)[number];
  }
  const type = f.type ? resourceType(f.type) : storedType;
  const options = type ? checkOptionsBody(type, f) : {};
  // The request fields last: they ask for the secrets once every other flag is known to be good.
  const http = await httpCheckBody(f);
  if (f.group) body.groupIds = await groupIds(rt, f.group);
  if (f.groups === false) body.groupIds = [];
  return { ...body, ...options, ...http, ...push };
}

/**
 * A create body (`resources add`, and `resources test`, which takes the same flags): `--target`
 * is required, and `--type` too unless the target is a URL, the one kind whose type goes without
 * saying. `command` names the verb in the usage errors.
 */
export async function createBody(rt: Runtime, name: string, f: ResourceFlags, command = 'resources add'): Promise<ResourceCreateBody> {
  if (f.type && resourceType(f.type) === 'PUSH') f.push = true;
  if (f.push) {
    if (f.type && resourceType(f.type) !== 'PUSH') usage(`--push makes a PUSH resource: drop --type ${f.type}`);
    f.type = 'PUSH';
    return { ...(await resourceBody(rt, f)), name } as ResourceCreateBody;
  }
  if (hasPushFlags(f)) usage(`--period, --cron, --tz, --grace and --slug are for a push check: add --push`);
  if (!f.type && f.target && /^https?:\/\//i.test(f.target)) f.type = 'HTTP';
  if (!f.target) usage(`${command} needs --target (and --type unless it is a URL)`);
  if (!f.type)
    usage(
      `${command} needs --type (one of ${RESOURCE_TYPES.join(', ')}): ` +
        `--target "${f.target}" is not an http:// or https:// URL, the one kind whose type goes without saying`,
    );
  return { ...(await resourceBody(rt, f)), name } as ResourceCreateBody;
}
