import type { AlertEventKind } from '../../../src/api/schemas/alert-rules.ts';
import { SEVERITIES, type Severity } from '../../../src/notifier-fields.ts';
import type { Rule } from './rule-row.ts';

/** The subject of an event as rules see it. */
export interface RuleSubject {
  type: 'resource' | 'agent' | 'certificate';
  id: number;
  /** The resource's groups (none for agents). */
  groupIds: number[];
  /** The event's severity (docs/API.md#severity): agents and certificates are critical. */
  severity: Severity;
}

/**
 * Whether a rule's scope covers this kind of event for this subject, whatever its severity. A
 * rule listing nothing covers every resource, agent and certificate; one listing resources or
 * groups covers those resources; one listing agents covers those agents. Certificates are in no
 * list: only a rule listing nothing routes them.
 */
export function ruleCovers(rule: Rule, kind: AlertEventKind, subject: Omit<RuleSubject, 'severity'>): boolean {
  if (!rule.enabled || !rule.events.includes(kind)) return false;
  const listed = rule.resourceIds.length + rule.groupIds.length + rule.agentIds.length > 0;
  if (!listed) return true;
  if (subject.type === 'agent') return rule.agentIds.includes(subject.id);
  if (subject.type === 'certificate') return false;
  return rule.resourceIds.includes(subject.id) || subject.groupIds.some((g) => rule.groupIds.includes(g));
}

/** Whether a rule routes this kind of event for this subject: its scope covers it and its `severities` include the event's. */
export function ruleMatches(rule: Rule, kind: AlertEventKind, subject: RuleSubject): boolean {
  return rule.severities.includes(subject.severity) && ruleCovers(rule, kind, subject);
}

/** The severity a rule sends an alert with: its override, else the alert's own. */
export const ruleSeverity = (rule: Rule, severity: Severity): Severity => rule.severityOverride ?? severity;

/** The higher of two severities (critical, then warning, then info). */
export const higher = (a: Severity, b: Severity): Severity => (SEVERITIES.indexOf(a) <= SEVERITIES.indexOf(b) ? a : b);

/** Where a set of rules sends one event, per notifier. */
export interface Target {
  /** The shortest group wait among the rules that reach the notifier. */
  groupWaitSeconds: number;
  /** What the notifier receives as the alert's severity: the highest of those rules' (ruleSeverity). */
  severity: Severity;
}

/** The notifiers a set of rules sends one event to. */
export function targetsOf(rules: Rule[], kind: AlertEventKind, subject: RuleSubject): Map<number, Target> {
  const targets = new Map<number, Target>();
  for (const rule of rules) {
    if (!ruleMatches(rule, kind, subject)) continue;
    const severity = ruleSeverity(rule, subject.severity);
    for (const id of rule.notifierIds) {
      const seen = targets.get(id);
      targets.set(
        id,
        seen
          ? { groupWaitSeconds: Math.min(seen.groupWaitSeconds, rule.groupWaitSeconds), severity: higher(seen.severity, severity) }
          : { groupWaitSeconds: rule.groupWaitSeconds, severity },
      );
    }
  }
  return targets;
}
