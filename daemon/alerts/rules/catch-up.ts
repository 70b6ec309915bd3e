import type { Transaction } from 'kysely';
import type { Database } from '../../store/schema.ts';
import { shapedChunks } from '../../store/batches.ts';
import { groupsOf } from '../routing/subjects.ts';
import type { AlertEventPayload } from '../types.ts';
import { ruleCovers } from './match.ts';
import { severityOf } from '../alert-events.ts';
import type { Rule } from './rule-row.ts';

/** The payload key that makes an opening event a catch-up: routed through this one rule only (routing/router.ts). */
export const CATCH_UP_KEY = 'catchUpRuleId';
export type CatchUpPayload = AlertEventPayload & { [CATCH_UP_KEY]?: number };

const OPENING_KINDS = ['INCIDENT_OPENED', 'AGENT_DOWN'] as const;

/**
 * A rule created or enabled while incidents are open notifies them, as
 * Alertmanager sends a new route what is already firing: for each open
 * incident the rule covers, a copy of its opening event goes into the outbox,
 * in the transaction that writes the rule, marked for this rule alone. The
 * router claims each copy once (on one pod), routes it through this rule only,
 * and skips the notifiers the incident's opening already reached: one message
 * per incident and notifier, ever. Incidents opened in maintenance, or whose
 * opening was inhibited, stay silent to their end, as they do for every rule.
 * Returns how many copies were written.
 */
export async function enqueueCatchUp(trx: Transaction<Database>, rule: Rule, now: number): Promise<number> {
  const kinds = OPENING_KINDS.filter((k) => rule.enabled && rule.events.includes(k));
  if (kinds.length === 0) return 0;
  const open = await trx
    .selectFrom('incidents')
    .select(['id', 'subject_type', 'resource_id', 'agent_id'])
    .where('resolved_at', 'is', null)
    .where('maintenance', '=', 0)
    .execute();
  const groups = await groupsOf(
    trx,
    open.filter((i) => i.resource_id !== null).map((i) => i.resource_id!),
  );
  const covered = open.filter((i) =>
    i.subject_type === 'agent'
      ? ruleCovers(rule, 'AGENT_DOWN', { type: 'agent', id: i.agent_id!, groupIds: [] })
      : ruleCovers(rule, 'INCIDENT_OPENED', { type: 'resource', id: i.resource_id!, groupIds: groups.get(i.resource_id!) ?? [] }),
  );
  let written = 0;
  for (const part of shapedChunks(
    covered.map((i) => i.id),
    256,
  )) {
    // The incident's own opening (its first opening event), unless silenced: maintenance and inhibition hold to the end.
    const events = await trx
      .selectFrom('alert_events')
      .selectAll()
      .where('incident_id', 'in', part)
      .where('kind', 'in', [...kinds])
      .orderBy('id')
      .execute();
    const first = new Map<number, (typeof events)[number]>();
    for (const e of events) if (!first.has(e.incident_id!)) first.set(e.incident_id!, e);
    for (const e of first.values()) {
      if (e.suppressed !== null) continue;
      const payload: CatchUpPayload = { ...(JSON.parse(e.payload) as AlertEventPayload), [CATCH_UP_KEY]: rule.id };
      // The severity the incident opened with (in the opening's payload) decides, as for the opening itself.
      if (!rule.severities.includes(severityOf(payload.severity))) continue;
      await trx
        .insertInto('alert_events')
        .values({
          kind: e.kind,
          subject_type: e.subject_type,
          resource_id: e.resource_id,
          agent_id: e.agent_id,
          incident_id: e.incident_id,
          payload: JSON.stringify(payload),
          suppressed: null,
          created_at: now,
          routed_at: null,
          routed_by: null,
        })
        .execute();
      written++;
    }
  }
  return written;
}
