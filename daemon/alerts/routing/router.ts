import { randomUUID } from 'node:crypto';
import type { AlertEventKind } from '../../../src/api/schemas/alert-rules.ts';
import type { DaemonContext } from '../../context.ts';
import { CATCH_UP_KEY, type CatchUpPayload } from '../rules/catch-up.ts';
import type { RuleCache } from '../rules/rule-cache.ts';
import { parseRule, type Rule } from '../rules/rule-row.ts';
import { targetsOf } from '../rules/match.ts';
import { addToNotification } from './grouping.ts';
import { holdsFor } from './inhibition.ts';
import { groupsOf, openingNotifiers } from './subjects.ts';
import type { Severity } from '../../../src/notifier-fields.ts';
import { severityOf } from '../alert-events.ts';
import type { AlertEventPayload } from '../types.ts';

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

  /** The rules catch-up events name: from the cache, else (another pod created it a moment ago) from the database; null when gone or disabled. */
  async #catchUpRules(catchUps: Map<number, number>, cached: Rule[]): Promise<Map<number, Rule | null>> {
    const out = new Map<number, Rule | null>();
    for (const id of new Set(catchUps.values())) {
      const rule = cached.find((r) => r.id === id);
      const row = rule
        ? undefined
        : await this.#ctx.db.selectFrom('alert_rules').selectAll().where('id', '=', id).where('enabled', '=', 1).executeTakeFirst();
      out.set(id, rule ?? (row ? parseRule(row) : null));
    }
    return out;
  }

  /** One pass; returns how many events it routed (including those it suppressed). */
  async routeOnce(now = Date.now()): Promise<number> {
    const db = this.#ctx.db;
    const candidates = await db.selectFrom('alert_events').selectAll().where('routed_at', 'is', null).orderBy('id').limit(BATCH).execute();
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

    const catchUps = catchUpsOf(ready);
    const [rules, groups, openings] = await Promise.all([
      this.#rules.get(now),
      groupsOf(db, resourceIds),
      openingNotifiers(
        db,
        ready.filter((e) => (CLOSING_KINDS.has(e.kind) || catchUps.has(e.id)) && e.incident_id !== null).map((e) => e.incident_id!),
      ),
    ]);
    const catchUpRules = await this.#catchUpRules(catchUps, rules);
    // A catch-up waits while its incident's opening is unrouted and not in this batch (another pod is routing it):
    // then the notifiers that opening reaches are known, and are not sent it twice.
    const pendingOpenings = await unroutedOpenings(
      db,
      [...catchUps.keys()].map((id) => ready.find((e) => e.id === id)!),
    );
    const enabled = new Set((await db.selectFrom('notifiers').select('id').where('enabled', '=', 1).execute()).map((n) => n.id));

    const token = `${this.#pod}:${randomUUID()}`;
    return db.transaction().execute(async (trx) => {
      await trx
        .updateTable('alert_events')
        .set({ routed_at: now, routed_by: token })
        .where(
          'id',
          'in',
          ready.map((e) => e.id),
        )
        .where('routed_at', 'is', null)
        .execute();
      const mine = new Set((await trx.selectFrom('alert_events').select('id').where('routed_by', '=', token).execute()).map((r) => r.id));
      const blocked = new Set(inhibited.filter((id) => mine.has(id)));
      if (blocked.size > 0) {
        await trx
          .updateTable('alert_events')
          .set({ suppressed: 'inhibited' })
          .where('id', 'in', [...blocked])
          .execute();
      }
      const open = new Map<number, number>();
      // Openings routed in this pass, for a resolution that follows in the same batch: severity, and where it went.
      const opened = new Map<number, { severity: Severity; notifiers: Map<number, Severity> }>();
      const requeue: number[] = [];
      const originals = new Set<number>(); // incidents whose ordinary opening this pass routed
      for (const event of ready) {
        if (!mine.has(event.id) || event.suppressed !== null || blocked.has(event.id)) continue;
        const catchUpRule = catchUps.has(event.id) ? (catchUpRules.get(catchUps.get(event.id)!) ?? null) : undefined;
        if (catchUpRule !== undefined && pendingOpenings.has(event.incident_id!) && !originals.has(event.incident_id!)) {
          requeue.push(event.id);
          continue;
        }
        const closing = CLOSING_KINDS.has(event.kind);
        const incident = event.incident_id ?? -1;
        const opening = opened.get(incident) ?? openings.get(incident);
        const before = opening?.notifiers ?? new Map<number, Severity>();
        // A resolution has its opening's severity (none of its own); agents and certificates are critical.
        const severity =
          event.subject_type !== 'resource' ? 'critical' : closing ? (opening?.severity ?? 'critical') : severityOfPayload(event.payload);
        const subject =
          event.subject_type === 'agent'
            ? { type: 'agent' as const, id: event.agent_id!, groupIds: [], severity }
            : event.subject_type === 'certificate'
              ? { type: 'certificate' as const, id: 0, groupIds: [], severity }
              : { type: 'resource' as const, id: event.resource_id!, groupIds: groups.get(event.resource_id!) ?? [], severity };
        // A catch-up goes through its rule alone (none: deleted or disabled since), never where the opening went.
        const targets = targetsOf(
          catchUpRule === undefined ? rules : catchUpRule ? [catchUpRule] : [],
          event.kind as AlertEventKind,
          subject,
        );
        const wentTo = closing ? before : undefined;
        const sentTo = new Map<number, Severity>(catchUpRule === undefined ? [] : before);
        for (const [notifierId, target] of targets) {
          if (!enabled.has(notifierId) || (wentTo && !wentTo.has(notifierId))) continue;
          if (catchUpRule !== undefined && before.has(notifierId)) continue;
          // A resolution reaches a pager with the severity its opening did there: one severity per incident.
          const sent = wentTo?.get(notifierId) ?? target.severity;
          await addToNotification(
            trx,
            { notifierId, eventId: event.id, groupWaitSeconds: target.groupWaitSeconds, reminder: false, severity: sent, now },
            open,
          );
          sentTo.set(notifierId, sent);
        }
        if (!closing && event.incident_id !== null) opened.set(event.incident_id, { severity, notifiers: sentTo });
        if (!closing && catchUpRule === undefined && event.incident_id !== null) originals.add(event.incident_id);
      }
      if (requeue.length > 0) {
        await trx.updateTable('alert_events').set({ routed_at: null, routed_by: null }).where('id', 'in', requeue).execute();
      }
      return mine.size - requeue.length;
    });
  }
}

type EventRow = { id: number; kind: string; incident_id: number | null; payload: string };

/** The severity an event carries (engine-written payloads: INCIDENT_OPENED, CERT_EXPIRING, catch-up copies). */
const severityOfPayload = (payload: string): Severity => severityOf((JSON.parse(payload) as AlertEventPayload).severity);

/** Catch-up events (rules/catch-up.ts) by event id, with their rule's id. */
function catchUpsOf(events: EventRow[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const e of events) {
    // The string test first: parsing every payload of a batch would cost more than the routing.
    if (e.incident_id === null || !e.payload.includes(`"${CATCH_UP_KEY}"`)) continue;
    const ruleId = (JSON.parse(e.payload) as CatchUpPayload)[CATCH_UP_KEY];
    if (typeof ruleId === 'number') out.set(e.id, ruleId);
  }
  return out;
}

/** Incidents of these catch-ups whose opening (an earlier, ordinary opening event) is not routed yet. */
async function unroutedOpenings(db: DaemonContext['db'], catchUps: EventRow[]): Promise<Set<number>> {
  const incidents = [...new Set(catchUps.map((e) => e.incident_id!))];
  if (incidents.length === 0) return new Set();
  const rows = await db
    .selectFrom('alert_events')
    .select(['incident_id', 'payload'])
    .where('incident_id', 'in', incidents)
    .where('kind', 'in', ['INCIDENT_OPENED', 'AGENT_DOWN'])
    .where('routed_at', 'is', null)
    .where('suppressed', 'is', null)
    .execute();
  return new Set(rows.filter((r) => !r.payload.includes(`"${CATCH_UP_KEY}"`)).map((r) => r.incident_id!));
}
