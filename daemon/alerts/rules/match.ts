import type { AlertEventKind } from '../../../src/api/schemas/alert-rules.ts';
import type { Rule } from './rule-row.ts';

/** The subject of an event as rules see it. */
export interface RuleSubject {
  type: 'resource' | 'agent' | 'certificate';
  id: number;
  /** The resource's groups (none for agents). */
  groupIds: number[];
}

/**
 * Whether a rule routes this kind of event for this subject. A rule listing
 * nothing covers every resource, agent and certificate; one listing resources
 * or groups covers those resources; one listing agents covers those agents.
 * Certificates are in no list: only a rule listing nothing routes them.
 */
export function ruleMatches(rule: Rule, kind: AlertEventKind, subject: RuleSubject): boolean {
  if (!rule.enabled || !rule.events.includes(kind)) return false;
  const listed = rule.resourceIds.length + rule.groupIds.length + rule.agentIds.length > 0;
  if (!listed) return true;
  if (subject.type === 'agent') return rule.agentIds.includes(subject.id);
  if (subject.type === 'certificate') return false;
  return rule.resourceIds.includes(subject.id) || subject.groupIds.some((g) => rule.groupIds.includes(g));
}

/** The notifiers a set of rules sends one event to, each with the shortest group wait among the rules. */
export function targetsOf(rules: Rule[], kind: AlertEventKind, subject: RuleSubject): Map<number, number> {
  const waits = new Map<number, number>();
  for (const rule of rules) {
    if (!ruleMatches(rule, kind, subject)) continue;
    for (const id of rule.notifierIds) waits.set(id, Math.min(waits.get(id) ?? Infinity, rule.groupWaitSeconds));
  }
  return waits;
}
