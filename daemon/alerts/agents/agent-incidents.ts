import type { Transaction } from 'kysely';
import type { DaemonContext } from '../../context.ts';
import type { AgentRow, Database } from '../../store/schema.ts';
import type { IncidentDeps } from '../incidents/engine.ts';
import { type IncidentChange, publishIncidents } from '../incidents/events.ts';
import { openIncident, resolveIncident } from '../incidents/store.ts';
import type { IncidentSubject } from '../types.ts';

/** How often the agents table is looked at. */
export const SWEEP_EVERY_MS = 1_000;

const CAUSE = { message: 'agent disconnected', errorCode: 'AGENT_DISCONNECTED' };

type Row = Pick<AgentRow, 'id' | 'name' | 'status' | 'last_seen_at' | 'connected_at' | 'remote_address' | 'open_incident_id'>;

const subjectOf = (row: Pick<Row, 'id' | 'name' | 'remote_address'>): IncidentSubject => ({
  type: 'agent',
  id: Number(row.id),
  name: row.name,
  target: row.remote_address,
});

/** What the sweep uses of the daemon. */
export type SweepDeps = Pick<DaemonContext, 'db' | 'log'> & IncidentDeps;

/** Thrown inside a transaction to roll it back: another daemon (or a reconnect) got there first. */
class Lost extends Error {}

/**
 * Agent incidents: an agent DISCONNECTED for longer than `agentGraceSeconds`
 * opens one (AGENT_DOWN), and the agent being back resolves it (AGENT_UP).
 * A sweep reads the agents that need either, every second. Several daemons
 * may sweep one database: the incident only counts if the conditional update
 * `SET open_incident_id … WHERE open_incident_id IS NULL` in the same
 * transaction claims the agent; otherwise the transaction rolls back.
 */
export class AgentIncidentSweep {
  readonly #ctx: SweepDeps;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(ctx: SweepDeps) {
    this.#ctx = ctx;
  }

  start(): void {
    this.#timer = setInterval(() => {
      this.#running = this.#running
        .then(() => this.sweep())
        .catch((err) => {
          if (!this.#stopped) this.#ctx.log.warn({ err }, 'agent incident sweep failed');
        });
    }, SWEEP_EVERY_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#running;
  }

  /** One pass: opens what is due, resolves what is back. */
  async sweep(now = Date.now()): Promise<void> {
    const graceMs = this.#ctx.config.incidents.agentGraceSeconds * 1000;
    const rows = await this.#ctx.db
      .selectFrom('agents')
      .select(['id', 'name', 'status', 'last_seen_at', 'connected_at', 'remote_address', 'open_incident_id'])
      .where((eb) =>
        eb.or([
          eb.and([eb('status', '=', 'DISCONNECTED'), eb('open_incident_id', 'is', null), eb('last_seen_at', '<=', now - graceMs)]),
          eb.and([eb('status', '!=', 'DISCONNECTED'), eb('open_incident_id', 'is not', null)]),
        ]),
      )
      .execute();
    if (rows.length === 0) return;
    const maintenance = this.#ctx.maintenance;
    await maintenance.ready();
    const changes: IncidentChange[] = [];
    for (const row of rows) {
      try {
        const change =
          row.status === 'DISCONNECTED'
            ? await this.#open(row, maintenance.agentInMaintenance(Number(row.id), now), now)
            : await this.#resolve(row, now);
        if (change) changes.push(change);
      } catch (err) {
        if (!(err instanceof Lost)) throw err;
      }
    }
    publishIncidents(this.#ctx, changes);
  }

  #open(row: Row, maintenance: boolean, now: number): Promise<IncidentChange> {
    return this.#ctx.db.transaction().execute(async (trx) => {
      const incident = await openIncident(trx, {
        subject: subjectOf(row),
        openedAt: Number(row.last_seen_at ?? now),
        cause: CAUSE,
        checks: 0,
        maintenance,
        at: now,
      });
      const claimed = await trx
        .updateTable('agents')
        .set({ open_incident_id: incident.id })
        .where('id', '=', row.id)
        .where('open_incident_id', 'is', null)
        .where('status', '=', 'DISCONNECTED')
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) !== 1) throw new Lost();
      return { kind: 'opened' as const, row: incident };
    });
  }

  #resolve(row: Row, now: number): Promise<IncidentChange | undefined> {
    return this.#ctx.db.transaction().execute(async (trx) => {
      const incidentId = Number(row.open_incident_id);
      const released = await trx
        .updateTable('agents')
        .set({ open_incident_id: null })
        .where('id', '=', row.id)
        .where('open_incident_id', '=', incidentId)
        .where('status', '!=', 'DISCONNECTED')
        .executeTakeFirst();
      if (Number(released.numUpdatedRows) !== 1) return undefined;
      // Back since it reconnected (the sweep may see it a second later).
      const at = row.connected_at === null ? now : Math.min(now, Number(row.connected_at));
      const resolved = await resolveIncident(trx, incidentId, subjectOf(row), { at });
      return resolved ? { kind: 'resolved' as const, row: resolved } : undefined;
    });
  }
}

/**
 * An agent is being deleted: its open incident resolves with the event
 * suppressed ('deleted'). Call it in the deleting transaction, before the row goes.
 */
export async function stopWatchingAgent(trx: Transaction<Database>, agentId: number, at = Date.now()): Promise<IncidentChange[]> {
  const row = await trx
    .selectFrom('agents')
    .select(['id', 'name', 'remote_address', 'open_incident_id'])
    .where('id', '=', agentId)
    .executeTakeFirst();
  if (!row || row.open_incident_id === null) return [];
  const resolved = await resolveIncident(trx, Number(row.open_incident_id), subjectOf(row), { at, reason: 'deleted' });
  return resolved ? [{ kind: 'resolved', row: resolved }] : [];
}
