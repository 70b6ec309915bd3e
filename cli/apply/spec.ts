import { RESOURCE_TYPES } from '../../src/api/kinds.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { type AlertRuleSpec, validateAlertRules } from './alert-rules-spec.ts';
import { type MaintenanceSpec, validateMaintenance } from './maintenance.ts';
import { type NotifierSpec, validateNotifiers } from './notifiers-spec.ts';
import { type StatusPageSpec, validateStatusPages } from './status-pages.ts';
import { didYouMean, fieldNames, SECTION_NAMES } from './fields.ts';
import { type CheckOptionsSpec, validateCheckOptions } from './check-options-spec.ts';
import { type HttpCheckSpec, validateHttpCheck } from './http-check-spec.ts';
import { type PushSpec, validatePush } from './push-spec.ts';
import { dependencyOrder, validateDependsOn } from './resource-deps.ts';
import { type AgentSpec, type RouteSpec, validateAgents, validateRoutes } from './routes-spec.ts';
import { SEVERITIES, type Severity } from '../../src/notifier-fields.ts';

/**
 * The file `monctl apply -f` reads (YAML or JSON): groups, resources,
 * announcements, notifiers, alert rules and maintenance windows, each matched
 * by name, and status pages, matched by slug. Validated whole before any write, so
 * that an invalid file changes nothing. Fields left out are not managed.
 */
export interface GroupSpec {
  name: string;
  visibility?: 'PUBLIC' | 'AUTHENTICATED' | 'HIDDEN';
}
export interface ResourceSpec {
  name: string;
  type: (typeof RESOURCE_TYPES)[number];
  /** PUSH: the slug, optional (made from the name). */
  target?: string;
  intervalSeconds?: number;
  groups?: string[];
  skipTLS?: boolean;
  recursive?: boolean;
  active?: boolean;
  failureThreshold?: number;
  successThreshold?: number;
  /** Where it is checked: `daemon` and agent names (docs/API.md#check-locations). */
  locations?: string[];
  quorum?: 'any' | 'majority' | 'all';
  /** What up means, in Gatus's syntax (docs/API.md#conditions); `[]` removes them. */
  conditions?: string[];
  /** The request and expected answer, secrets expanded (cli/apply/http-check-spec.ts). */
  http?: HttpCheckSpec;
  /** PUSH: the schedule (cli/apply/push-spec.ts). */
  push?: PushSpec;
  /** A protocol check's own options, `dns: {…}` (cli/apply/check-options-spec.ts). */
  options?: CheckOptionsSpec;
  severity?: Severity;
  /** Names of the resources it depends on (cli/apply/resource-deps.ts); [] removes them. */
  dependsOn?: string[];
}
export interface AnnouncementSpec {
  name: string;
  kind: 'INFORMATION' | 'WARNING' | 'PROBLEM';
  content: string;
  active: boolean;
  activeUntil: string | null;
}
export interface Spec {
  groups: GroupSpec[];
  resources: ResourceSpec[];
  announcements: AnnouncementSpec[];
  notifiers: NotifierSpec[];
  alertRules: AlertRuleSpec[];
  maintenance: MaintenanceSpec[];
  /** The file has a `maintenance:` section: only then does --prune delete windows it does not name. */
  managesMaintenance: boolean;
  statusPages: StatusPageSpec[];
  /** Tunnel agents and routes (cli/apply/routes-spec.ts). */
  agents: AgentSpec[];
  routes: RouteSpec[];
  /** The file has an `agents:` (`routes:`) section: only then does --prune delete agents (routes) it does not name. */
  managesAgents: boolean;
  managesRoutes: boolean;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Past this many characters a YAML file is read by js-yaml (cli/apply/large-yaml.ts). The `yaml`
 * package builds a document model first: 9 s and 385 MB for 20,000 resources (its lexer alone
 * took 1.6 s), so a fleet of a million would take many minutes; js-yaml reads the same file in a
 * fifth of the time.
 */
const LARGE_YAML = 1024 * 1024;

export async function parseSpecText(text: string, file: string): Promise<unknown> {
  if (/\.json$/i.test(file)) {
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new MonctlError('invalid-file', `${file}: invalid JSON: ${(err as Error).message}`, ExitCode.usage);
    }
  }
  try {
    if (text.length > LARGE_YAML) return (await import('./large-yaml.ts')).loadLargeYaml(text, file);
    const { parse } = await import('yaml');
    return parse(text);
  } catch (err) {
    throw new MonctlError('invalid-file', `${file}: invalid YAML: ${(err as Error).message.split('\n')[0]}`, ExitCode.usage);
  }
}

const SECTIONS = SECTION_NAMES;

/** `env` expands the file's `${ENV}` secrets (an importer checks its file with placeholders set). */
export function validateSpec(raw: unknown, file: string, env: NodeJS.ProcessEnv = process.env): Spec {
  const errors: string[] = [];
  const err = (path: string, msg: string) => errors.push(`  ${path}: ${msg}`);
  const spec: Spec = {
    groups: [],
    resources: [],
    announcements: [],
    notifiers: [],
    alertRules: [],
    maintenance: [],
    managesMaintenance: false,
    statusPages: [],
    agents: [],
    routes: [],
    managesAgents: raw !== null && typeof raw === 'object' && (raw as Obj).agents !== undefined,
    managesRoutes: raw !== null && typeof raw === 'object' && (raw as Obj).routes !== undefined,
  };
  if (!isObj(raw))
    throw new MonctlError('invalid-file', `${file}: expected a mapping with ${SECTIONS.join(', ')} (any of them)`, ExitCode.usage);
  for (const key of Object.keys(raw))
    if (!(SECTIONS as readonly string[]).includes(key)) err(key, `unknown section${didYouMean(key, SECTIONS)}`);

  const list = (key: (typeof SECTIONS)[number]): Obj[] => {
    const v = raw[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) {
      err(key, 'must be a list');
      return [];
    }
    return v.map((item, i) => {
      if (!isObj(item)) err(`${key}[${i}]`, 'must be a mapping');
      return isObj(item) ? item : {};
    });
  };
  const check = (path: string, item: Obj, allowed: string[]) => {
    for (const k of Object.keys(item)) if (!allowed.includes(k)) err(`${path}.${k}`, `unknown field${didYouMean(k, allowed)}`);
  };
  const str = (path: string, v: unknown, required: boolean): string | undefined => {
    if (v === undefined || v === null) {
      if (required) err(path, 'is required');
      return undefined;
    }
    if (typeof v !== 'string' || v.trim() === '') {
      err(path, 'must be a non-empty string');
      return undefined;
    }
    return v;
  };
  const bool = (path: string, v: unknown): boolean | undefined => {
    if (v === undefined) return undefined;
    if (typeof v !== 'boolean') err(path, 'must be true or false');
    return v as boolean;
  };
  const oneOf = <T extends string>(path: string, v: unknown, values: readonly T[], required: boolean): T | undefined => {
    const s = str(path, v, required);
    if (s === undefined) return undefined;
    const up = s.toUpperCase() as T;
    if (!values.includes(up)) err(path, `must be one of ${values.join(', ')}`);
    return up;
  };
  const unique = (kind: string, names: Array<string | undefined>) => {
    const seen = new Set<string>();
    names.forEach((n, i) => {
      if (n === undefined) return;
      if (seen.has(n)) err(`${kind}[${i}].name`, `duplicate name "${n}"`);
      seen.add(n);
    });
  };

  list('groups').forEach((g, i) => {
    const p = `groups[${i}]`;
    check(p, g, fieldNames('groups'));
    spec.groups.push({
      name: str(`${p}.name`, g.name, true)!,
      visibility: oneOf(`${p}.visibility`, g.visibility, ['PUBLIC', 'AUTHENTICATED', 'HIDDEN'] as const, false),
    });
  });
  list('resources').forEach((r, i) => {
    const p = `resources[${i}]`;
    check(p, r, [...fieldNames('resources'), 'resourceType']);
    for (const k of ['failureThreshold', 'successThreshold']) {
      const v = r[k];
      if (v !== undefined && (!Number.isInteger(v) || (v as number) < 1 || (v as number) > 100))
        err(`${p}.${k}`, 'must be an integer from 1 to 100');
    }
    const type = oneOf(`${p}.type`, r.type ?? r.resourceType, RESOURCE_TYPES, true);
    const target = str(`${p}.target`, r.target, type !== 'PUSH');
    if (type === 'HTTP' && target && !/^https?:\/\/[^/\s]+/i.test(target)) err(`${p}.target`, 'must be an http(s) URL for HTTP');
    if (type === 'WEBSOCKET' && target && !/^wss?:\/\/[^/\s]+/i.test(target)) err(`${p}.target`, 'must be a ws(s):// URL for WEBSOCKET');
    if (['TCP', 'TLS', 'UDP', 'GRPC'].includes(type!) && target && !/^(\[[0-9a-f:.]+\]|[^:\s]+):\d{1,5}$/i.test(target))
      err(`${p}.target`, `must be host:port for ${type}`);
    const interval = r.intervalSeconds;
    if (interval !== undefined && (!Number.isInteger(interval) || (interval as number) < 10 || (interval as number) > 86400)) {
      err(`${p}.intervalSeconds`, 'must be an integer from 10 to 86400');
    }
    let groups: string[] | undefined;
    if (r.groups !== undefined) {
      if (!Array.isArray(r.groups) || r.groups.some((g) => typeof g !== 'string')) err(`${p}.groups`, 'must be a list of group names');
      else groups = r.groups as string[];
    }
    let locations: string[] | undefined;
    if (r.locations !== undefined) {
      const list = r.locations;
      if (!Array.isArray(list) || list.length === 0 || list.length > 16 || list.some((l) => typeof l !== 'string' || l.trim() === '')) {
        err(`${p}.locations`, 'must be a list of 1 to 16 locations: daemon and agent names');
      } else if (new Set(list).size !== list.length) err(`${p}.locations`, 'lists a location twice');
      else locations = list as string[];
    }
    let conditions: string[] | undefined;
    if (r.conditions !== undefined) {
      const list = r.conditions;
      // The daemon parses them (400 naming conditions[i] and the column); here only the shape.
      if (!Array.isArray(list) || list.length > 32 || list.some((c) => typeof c !== 'string' || c.trim() === ''))
        err(`${p}.conditions`, 'must be a list of at most 32 conditions');
      else conditions = list as string[];
    }
    const severity = r.severity;
    if (severity !== undefined && !SEVERITIES.includes(severity as Severity))
      err(`${p}.severity`, `must be one of ${SEVERITIES.join(', ')}`);
    const quorum = r.quorum;
    if (quorum !== undefined && !['any', 'majority', 'all'].includes(quorum as string)) err(`${p}.quorum`, 'must be any, majority or all');
    spec.resources.push({
      name: str(`${p}.name`, r.name, true)!,
      type: type!,
      target,
      intervalSeconds: interval as number | undefined,
      groups,
      skipTLS: bool(`${p}.skipTLS`, r.skipTLS),
      recursive: bool(`${p}.recursive`, r.recursive),
      active: bool(`${p}.active`, r.active),
      failureThreshold: r.failureThreshold as number | undefined,
      successThreshold: r.successThreshold as number | undefined,
      locations,
      quorum: quorum as ResourceSpec['quorum'],
      conditions,
      severity: severity as Severity | undefined,
      dependsOn: validateDependsOn(p, r.name, r.dependsOn, err),
      http: validateHttpCheck(p, r, type, err, env),
      push: validatePush(p, r, type, target, err),
      options: validateCheckOptions(p, r, type, err),
    });
  });
  list('announcements').forEach((a, i) => {
    const p = `announcements[${i}]`;
    check(p, a, fieldNames('announcements'));
    const name = str(`${p}.name`, a.name, true);
    if (name && !/^[A-Za-z0-9_-]{1,64}$/.test(name)) err(`${p}.name`, 'must be 1 to 64 of A-Z a-z 0-9 _ - (it becomes an HTML class)');
    const until = a.activeUntil;
    if (until !== undefined && until !== null && (typeof until !== 'string' || Number.isNaN(Date.parse(until))))
      err(`${p}.activeUntil`, 'must be a date-time or null');
    spec.announcements.push({
      name: name!,
      kind: oneOf(`${p}.kind`, a.kind, ['INFORMATION', 'WARNING', 'PROBLEM'] as const, true)!,
      content: str(`${p}.content`, a.content, true)!,
      active: bool(`${p}.active`, a.active) ?? true,
      activeUntil: (until as string | undefined) ?? null,
    });
  });
  spec.notifiers = validateNotifiers(list('notifiers'), err, env);
  unique(
    'notifiers',
    spec.notifiers.map((n) => n.name),
  );
  spec.alertRules = validateAlertRules(list('alertRules'), err);
  unique(
    'alertRules',
    spec.alertRules.map((r) => r.name),
  );
  spec.statusPages = validateStatusPages(list('statusPages'), err);
  unique(
    'groups',
    spec.groups.map((g) => g.name),
  );
  unique(
    'resources',
    spec.resources.map((r) => r.name),
  );
  spec.resources = dependencyOrder(spec.resources, err);
  unique(
    'announcements',
    spec.announcements.map((a) => a.name),
  );
  spec.agents = validateAgents(list('agents'), err);
  unique(
    'agents',
    spec.agents.map((a) => a.name),
  );
  spec.routes = validateRoutes(list('routes'), err);
  unique(
    'routes',
    spec.routes.map((r) => r.name),
  );
  spec.managesMaintenance = raw.maintenance !== undefined;
  list('maintenance').forEach((m, i) => spec.maintenance.push(validateMaintenance(m, `maintenance[${i}]`, err)));
  unique(
    'maintenance',
    spec.maintenance.map((m) => m.name),
  );
  const slugs = new Set<string>();
  spec.statusPages.forEach((p, i) => {
    if (p.slug && slugs.has(p.slug)) err(`statusPages[${i}].slug`, `duplicate slug "${p.slug}"`);
    slugs.add(p.slug);
  });
  // Exit 2: a usage error, like a bad flag (the file is the command's input).
  if (errors.length)
    throw new MonctlError('invalid-file', `${file} is invalid; nothing was changed:\n${errors.join('\n')}`, ExitCode.usage);
  return spec;
}
