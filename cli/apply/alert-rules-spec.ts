import { ALERT_EVENT_KINDS } from '../../src/api/kinds.ts';
import { SEVERITIES, type Severity } from '../../src/notifier-fields.ts';
import { didYouMean, fieldNames } from './fields.ts';

/**
 * The `alertRules:` section of an apply file: which notifiers get which
 * alert events, everything named (notifiers, resources, groups, agents), so
 * that a file means the same on every install. Names are resolved when the
 * plan runs, after the notifiers, groups and resources of the same file exist.
 */
export interface AlertRuleSpec {
  name: string;
  enabled?: boolean;
  events: string[];
  notifiers: string[];
  resources: string[];
  groups: string[];
  agents: string[];
  groupWaitSeconds?: number;
  repeatIntervalMinutes?: number;
  /** The resource severities it routes (left out: not managed; the daemon's default is all). */
  severities?: Severity[];
  /** What pagers receive instead of the resource's severity; null: the resource's own. */
  severityOverride?: Severity | null;
}

const KINDS: readonly string[] = ALERT_EVENT_KINDS;
const FIELDS = fieldNames('alertRules');
type Obj = Record<string, unknown>;

export function validateAlertRules(list: Obj[], err: (path: string, msg: string) => void): AlertRuleSpec[] {
  return list.map((r, i) => {
    const p = `alertRules[${i}]`;
    for (const key of Object.keys(r)) if (!FIELDS.includes(key)) err(`${p}.${key}`, `unknown field${didYouMean(key, FIELDS)}`);
    if (typeof r.name !== 'string' || r.name.trim() === '' || r.name.length > 100)
      err(`${p}.name`, 'must be a non-empty string of at most 100 characters');
    if (r.enabled !== undefined && typeof r.enabled !== 'boolean') err(`${p}.enabled`, 'must be true or false');
    const names = (key: string, required: boolean): string[] => {
      const v = r[key];
      if (v === undefined || v === null) {
        if (required) err(`${p}.${key}`, 'is required');
        return [];
      }
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x === '') || (required && v.length === 0)) {
        err(`${p}.${key}`, `must be a ${required ? 'non-empty ' : ''}list of names`);
        return [];
      }
      return v as string[];
    };
    const events = names('events', true).map((e) => e.toUpperCase());
    for (const e of events) if (!KINDS.includes(e)) err(`${p}.events`, `"${e}" is not one of ${KINDS.join(', ')}`);
    const number = (key: string, max: number, integer: boolean): number | undefined => {
      const v = r[key];
      if (v === undefined) return undefined;
      if (typeof v !== 'number' || v < 0 || v > max || (integer && !Number.isInteger(v)))
        err(`${p}.${key}`, `must be a${integer ? 'n integer' : ' number'} from 0 to ${max}`);
      return v as number;
    };
    const severities = r.severities === undefined ? undefined : names('severities', true).map((x) => x.toLowerCase() as Severity);
    for (const x of severities ?? []) if (!SEVERITIES.includes(x)) err(`${p}.severities`, `"${x}" is not one of ${SEVERITIES.join(', ')}`);
    const override = r.severityOverride;
    if (override !== undefined && override !== null && !SEVERITIES.includes(override as Severity))
      err(`${p}.severityOverride`, `must be one of ${SEVERITIES.join(', ')}, or null`);
    return {
      name: r.name as string,
      severities,
      severityOverride: override as Severity | null | undefined,
      enabled: r.enabled as boolean | undefined,
      events,
      notifiers: names('notifiers', true),
      resources: names('resources', false),
      groups: names('groups', false),
      agents: names('agents', false),
      groupWaitSeconds: number('groupWaitSeconds', 3600, true),
      repeatIntervalMinutes: number('repeatIntervalMinutes', 43200, false),
    };
  });
}
