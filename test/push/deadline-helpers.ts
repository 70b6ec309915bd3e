import { operations } from '../../src/api/operations.ts';
import type { TestDaemon } from '../helpers/daemon.ts';
import { queryDb } from '../helpers/test-database.ts';

/**
 * What the deadline tests share: PUSH resources made through the API, their deadline as the
 * database holds it, and their MISSED_PING entries with the times in ms (the API's date-times
 * stop at the second; the judge's delay is measured in ms).
 */
export async function pushResource(d: TestDaemon, name: string, fields: Record<string, unknown> = {}): Promise<number> {
  const body = { name, resourceType: 'PUSH', failureThreshold: 1, ...fields };
  return (await d.admin.call(operations.createResource, { body: body as never })).id;
}

export interface PushRow {
  uuid: string;
  lateAt: number | null;
}

export async function pushRow(d: TestDaemon, id: number): Promise<PushRow> {
  const [row] = await queryDb<{ uuid: string; late_at: number | string | null }>(
    d,
    'SELECT uuid, late_at FROM push_checks WHERE resource_id = ?',
    id,
  );
  return { uuid: row.uuid, lateAt: row.late_at === null ? null : Number(row.late_at) };
}

export async function lateAt(d: TestDaemon, id: number): Promise<number> {
  const { lateAt } = await pushRow(d, id);
  if (lateAt === null) throw new Error(`push check ${id} has no deadline`);
  return lateAt;
}

export interface Missed {
  message: string;
  checkedAt: number;
}

/** The resource's MISSED_PING history entries, oldest first. */
export async function missedEntries(d: TestDaemon, id: number): Promise<Missed[]> {
  const rows = await queryDb<{ message: string; checked_at: number | string }>(
    d,
    "SELECT o.message, h.checked_at FROM check_history h JOIN check_outcomes o ON o.id = h.outcome_id WHERE h.resource_id = ? AND o.error_code = 'MISSED_PING' ORDER BY h.id",
    id,
  );
  return rows.map((r) => ({ message: r.message, checkedAt: Number(r.checked_at) }));
}

/** Polls until `check` returns something truthy (the test's timeout bounds it). */
export async function until<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** One sample of a metric without labels, from `/actuator/prometheus`. */
export async function metric(d: TestDaemon, name: string): Promise<number> {
  const text = (await d.admin.raw('GET', '/actuator/prometheus')).text;
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`no sample of ${name}`);
  return Number(line.slice(name.length + 1));
}
