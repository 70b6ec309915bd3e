import type { DaemonContext } from '../../context.ts';
import { shapedChunks } from '../../store/batches.ts';
import { ruleMatches, ruleSeverity } from '../rules/match.ts';
import type { RuleCache } from '../rules/rule-cache.ts';
import { addToNotification } from './grouping.ts';
import { groupsOf, openingNotifiers } from './subjects.ts';

/**
 * Reminders while an incident stays open: every rule with a repeat interval
 * re-sends the opening alert to the notifiers that got it, once per interval.
 * Each reminder is claimed by a conditional update of `alert_reminders`
 * (last_at moves only from the value this pass read), so several daemons
 * remind once between them.
 */
export async function remindOnce(ctx: DaemonContext, rules: RuleCache, now = Date.now()): Promise<number> {
  const repeating = (await rules.get(now)).filter(
    (r) => r.repeatIntervalSeconds > 0 && (r.events.includes('INCIDENT_OPENED') || r.events.includes('AGENT_DOWN')),
  );
  if (repeating.length === 0) return 0;
  const db = ctx.db;
  const incidents = await db
    .selectFrom('incidents')
    .select(['id', 'subject_type', 'resource_id', 'agent_id'])
    .where('resolved_at', 'is', null)
    .where('maintenance', '=', 0)
    .execute();
  if (incidents.length === 0) return 0;
  const ids = incidents.map((i) => i.id);
  const openings = await openingNotifiers(db, ids);
  const groups = await groupsOf(
    db,
    incidents.filter((i) => i.resource_id !== null).map((i) => i.resource_id!),
  );
  const routedAt = new Map<number, number>();
  const last = new Map<string, number>();
  for (const part of shapedChunks(ids, 256)) {
    const events = await db
      .selectFrom('alert_events')
      .select(['incident_id', 'routed_at'])
      .where('incident_id', 'in', part)
      .where('kind', 'in', ['INCIDENT_OPENED', 'AGENT_DOWN'])
      .execute();
    for (const e of events) if (e.routed_at !== null) routedAt.set(e.incident_id!, e.routed_at);
    const rows = await db.selectFrom('alert_reminders').selectAll().where('incident_id', 'in', part).execute();
    for (const r of rows) last.set(`${r.rule_id}:${r.incident_id}`, r.last_at);
  }

  let reminded = 0;
  for (const incident of incidents) {
    const opening = openings.get(incident.id);
    const since = routedAt.get(incident.id);
    if (!opening || opening.notifiers.size === 0 || since === undefined) continue;
    const agent = incident.subject_type === 'agent';
    const kind = agent ? 'AGENT_DOWN' : 'INCIDENT_OPENED';
    const severity = opening.severity;
    const subject = agent
      ? { type: 'agent' as const, id: incident.agent_id!, groupIds: [], severity }
      : { type: 'resource' as const, id: incident.resource_id!, groupIds: groups.get(incident.resource_id!) ?? [], severity };
    for (const rule of repeating) {
      if (!ruleMatches(rule, kind, subject)) continue;
      const previous = last.get(`${rule.id}:${incident.id}`);
      if (now - (previous ?? since) < rule.repeatIntervalSeconds * 1000) continue;
      const notifiers = rule.notifierIds.filter((n) => opening.notifiers.has(n));
      if (notifiers.length === 0) continue;
      await db.transaction().execute(async (trx) => {
        const claimed =
          previous === undefined
            ? await trx
                .insertInto('alert_reminders')
                .values({ rule_id: rule.id, incident_id: incident.id, last_at: now })
                .onConflict((oc) => oc.doNothing())
                .executeTakeFirst()
                .then((r) => Number(r.numInsertedOrUpdatedRows ?? 0n))
            : await trx
                .updateTable('alert_reminders')
                .set({ last_at: now })
                .where('rule_id', '=', rule.id)
                .where('incident_id', '=', incident.id)
                .where('last_at', '=', previous)
                .executeTakeFirst()
                .then((r) => Number(r.numUpdatedRows));
        if (claimed !== 1) return;
        const open = new Map<number, number>();
        for (const notifierId of notifiers) {
          await addToNotification(
            trx,
            {
              notifierId,
              eventId: opening.eventId,
              groupWaitSeconds: rule.groupWaitSeconds,
              reminder: true,
              // The reminder is this rule's: its override, else the opening's severity.
              severity: ruleSeverity(rule, severity),
              now,
            },
            open,
          );
        }
        reminded++;
      });
    }
  }
  return reminded;
}
