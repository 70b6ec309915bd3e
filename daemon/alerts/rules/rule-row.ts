import type { Selectable } from 'kysely';
import type { AlertEventKind } from '../../../src/api/schemas/alert-rules.ts';
import { SEVERITIES, type Severity } from '../../../src/notifier-fields.ts';
import { formatDateTime } from '../../../src/time.ts';
import type { AlertRulesTable } from '../../store/schema.ts';

export type AlertRuleRow = Selectable<AlertRulesTable>;

/** A rule as the router uses it: lists parsed once. */
export interface Rule {
  id: number;
  name: string;
  enabled: boolean;
  events: AlertEventKind[];
  notifierIds: number[];
  resourceIds: number[];
  groupIds: number[];
  agentIds: number[];
  /** The resource severities it covers (all three when none were given). */
  severities: Severity[];
  /** Sent to pagers instead of the resource's severity; null: the resource's. */
  severityOverride: Severity | null;
  groupWaitSeconds: number;
  /** 0: never remind. */
  repeatIntervalSeconds: number;
  createdAt: number;
  updatedAt: number;
}

export const DEFAULT_GROUP_WAIT_SECONDS = 30;
export const DEFAULT_REPEAT_INTERVAL_SECONDS = 240 * 60;

function ids(text: string): number[] {
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? value.filter((v): v is number => Number.isInteger(v)) : [];
}

export function parseRule(row: AlertRuleRow): Rule {
  return {
    id: row.id,
    name: row.name,
    enabled: row.enabled === 1,
    events: JSON.parse(row.events) as AlertEventKind[],
    notifierIds: ids(row.notifier_ids),
    resourceIds: ids(row.resource_ids),
    groupIds: ids(row.group_ids),
    agentIds: ids(row.agent_ids),
    severities: row.severities === null ? [...SEVERITIES] : (JSON.parse(row.severities) as Severity[]),
    severityOverride: (row.severity_override as Severity | null) ?? null,
    groupWaitSeconds: row.group_wait_seconds ?? DEFAULT_GROUP_WAIT_SECONDS,
    repeatIntervalSeconds: row.repeat_interval_seconds ?? DEFAULT_REPEAT_INTERVAL_SECONDS,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The API shape. */
export function toAlertRule(row: AlertRuleRow) {
  const rule = parseRule(row);
  const listed = rule.resourceIds.length + rule.groupIds.length + rule.agentIds.length > 0;
  return {
    id: rule.id,
    name: rule.name,
    enabled: rule.enabled,
    events: rule.events,
    notifierIds: rule.notifierIds,
    resourceIds: rule.resourceIds,
    groupIds: rule.groupIds,
    agentIds: rule.agentIds,
    scope: listed ? ('LISTED' as const) : ('ALL' as const),
    severities: rule.severities,
    severityOverride: rule.severityOverride,
    groupWaitSeconds: rule.groupWaitSeconds,
    repeatIntervalMinutes: rule.repeatIntervalSeconds / 60,
    createdAt: formatDateTime(rule.createdAt),
    updatedAt: formatDateTime(rule.updatedAt),
  };
}

/** Minutes as the API takes them (fractions allowed) to whole seconds: any positive value is at least one second. */
export function repeatSeconds(minutes: number | undefined): number {
  if (minutes === undefined) return DEFAULT_REPEAT_INTERVAL_SECONDS;
  if (minutes === 0) return 0;
  return Math.max(1, Math.round(minutes * 60));
}
