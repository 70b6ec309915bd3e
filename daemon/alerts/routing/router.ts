import { randomUUID } from 'node:crypto';
import type { AlertEventKind } from '../../../src/api/schemas/alert-rules.ts';
import type { DaemonContext } from '../../context.ts';
import type { RuleCache } from '../rules/rule-cache.ts';
import { targetsOf } from '../rules/match.ts';
import { addToNotification } from './grouping.ts';
import { holdsFor } from './inhibition.ts';
import { groupsOf, openingNotifiers } from './subjects.ts';

/** Events routed per pass; the rest wait for the next pass (a second later at most). */
const BATCH = 500;
/** A resource alert is deferred for an away agent at most this long, then routed anyway. */
const MAX_DEFER_MS = 10 * 60_000;
const CLOSING_KINDS = new Set<string>(['INCIDENT_RESOLVED', 'AGENT_UP']);

/**
 * Moves alert events from the outbox into notifications: claims unrouted
 * events (a conditional update with a per-pass token, so of several daemons
 * on one database exactly one routes each event), applies the rules,
 * inhibition and "a resolution goes where the opening went", and groups what
 * goes to each notifier. Claim and grouping commit together: a crash loses
 * nothing, and a pass that fails leaves its events for the next.
 */
export class Router {
  readonly #ctx: DaemonContext;
  readonly #rules: RuleCache;
  readonly #pod: string;

  constructor(ctx: DaemonContext, rules: RuleCache, pod: string) {
    this.#ctx = ctx;
    this.#rules = rules;
    this.#pod = pod;
  }

  /** One pass; returns how many events it routed (including those it suppressed). */
  async routeOnce(now = Date.now()): Promise<number> {
    const db = this.#ctx.db;
    const candidates = await db.selectFrom('alert_events').selectAll().where('routed_at', 'is', null)
      .orderBy('id').limit(BATCH).execute();
    if (candidates.length === 0) return 0;

    const resourceIds = candidates.filter((e) => e.resource_id !== null && e.suppressed === null).map((e) => e.resource_id!);
    const holds = await holdsFor(db, resourceIds);
    const inhibited: number[] = [];
    const ready = candidates.filter((e) => {
      const hold = e.resource_id !== null && e.suppressed === null ? holds.get(e.resource_id) : undefined;
      if (hold === 'inhibit') inhibited.push(e.id);
      return hold !== 'defer' || now - e.created_at > MAX_DEFER_MS;
    });
    if (ready.length === 0) return 0;

    const [rules, groups, openings] = await Promise.all([
      this.#rules.get(now),
      groupsOf(db, resourceIds),
      openingNotifiers(db, ready.filter((e) => CLOSING_KINDS.has(e.kind) && e.incident_id !== null).map((e) => e.incident_id!)),
    ]);
    const enabled = new Set((await db.selectFrom('notifiers').select('id').where('enabled', '=', 1).execute()).map((n) => n.id));

    const token = `${this.#pod}:${randomUUID()}`;
    return db.transaction().execute(async (trx) => {
      await trx.updateTable('alert_events').set({ routed_at: now, routed_by: token })
        .where('id', 'in', ready.map((e) => e.id)).where('routed_at', 'is', null).execute();
      const mine = new Set((await trx.selectFrom('alert_events').select('id').where('routed_by', '=', token).execute()).map((r) => r.id));
      const blocked = new Set(inhibited.filter((id) => mine.has(id)));
      if (blocked.size > 0) {
        await trx.updateTable('alert_events').set({ suppressed: 'inhibited' }).where('id', 'in', [...blocked]).execute();
      }
      const open = new Map<number, number>();
      // Openings routed in this pass, for a resolution that follows in the same batch.
      const opened = new Map<number, Set<number>>();
      for (const event of ready) {
        if (!mine.has(event.id) || event.suppressed !== null || blocked.has(event.id)) continue;
        const subject = event.subject_type === 'agent'
          ? { type: 'agent' as const, id: event.agent_id!, groupIds: [] }
          : event.subject_type === 'certificate'
            ? { type: 'certificate' as const, id: 0, groupIds: [] }
            : { type: 'resource' as const, id: event.resource_id!, groupIds: groups.get(event.resource_id!) ?? [] };
        const targets = targetsOf(rules, event.kind as AlertEventKind, subject);
        const closing = CLOSING_KINDS.has(event.kind);
        const incident = event.incident_id ?? -1;
        const wentTo = closing ? (opened.get(incident) ?? openings.get(incident)?.notifiers ?? new Set<number>()) : undefined;
        const sentTo = new Set<number>();
        for (const [notifierId, groupWaitSeconds] of targets) {
          if (!enabled.has(notifierId) || (wentTo && !wentTo.has(notifierId))) continue;
          await addToNotification(trx, { notifierId, eventId: event.id, groupWaitSeconds, reminder: false, now }, open);
          sentTo.add(notifierId);
        }
        if (!closing && event.incident_id !== null) opened.set(event.incident_id, sentTo);
      }
      return mine.size;
    });
  }
}
