import type { Transaction } from 'kysely';
import type { resourceOperations } from '../../src/api/ops/resources.ts';
import { MAX_BATCH_ITEMS } from '../../src/api/schemas/resource-batch.ts';
import { HttpError } from '../../src/errors.ts';
import type { RequestContext } from '../http/bind.ts';
import type { DaemonContext } from '../context.ts';
import type { Database } from '../store/schema.ts';
import { uniqueViolation } from '../store/unique-violation.ts';
import { publishIncidents } from '../alerts/incidents/events.ts';
import { checkItems, type Item, type ItemError, itemErrors } from './batch-items.ts';
import { planNames, type Target } from './batch-names.ts';
import { insertPlain, plainCreate } from './batch-insert.ts';
import { insertResource } from './resource-create.ts';
import { deleteResourceRows } from './resource-delete.ts';
import { announceUpdate, type Patched, patchResource } from './resource-update.ts';
import type { MonitoringState } from './state.ts';

type Op = (typeof resourceOperations)['batchResources'];
type Done =
  | { index: number; op: 'create'; id: number; name: string }
  | { index: number; op: 'update'; id: number; name: string; patched: Patched; regrouped: boolean }
  | { index: number; op: 'delete'; id: number; name: string; incidents: Exclude<Awaited<ReturnType<typeof deleteResourceRows>>, false> };

/**
 * `POST /admin/api/resources/batch` (docs/API.md#batches): creates, updates and deletes in
 * order, in one transaction, each checked as its single call checks it. Any refused item rolls
 * everything back, and the 4xx lists every refused item. The side effects follow the commit in
 * bulk: visibility read 500 resources per query, one bus event per resource in one tick (the
 * scheduler, caches and the pods' relay coalesce a tick's events into one reload or message).
 */
export async function batchResources(state: MonitoringState, { ctx, body }: RequestContext<Op>) {
  if (body.items.length > MAX_BATCH_ITEMS)
    throw new HttpError(413, 'payload-too-large', `A batch takes at most ${MAX_BATCH_ITEMS} items; this one has ${body.items.length}`);
  const now = Date.now();
  const checked = checkItems(body.items, ctx.clock.now());
  const done = await ctx.db
    .transaction()
    .execute(async (trx) => {
      const errors = [...checked.errors];
      const { targets, errors: nameErrors } = await planNames(trx, checked.items);
      errors.push(...nameErrors);
      const refused = new Set(errors.map((e) => e.index));
      const out = await applyItems(
        ctx,
        trx,
        checked.items.filter((i) => !refused.has(i.index)),
        targets,
        errors,
        now,
      );
      if (errors.length > 0) throw refusal(errors, body.items.length);
      return out;
    })
    .catch((err: unknown) => {
      throw uniqueViolation(err, 'name') ?? err;
    });
  await announce(state, ctx, done, now);
  return {
    items: done.map((d) => ({ op: d.op, id: d.id, name: d.name, changed: d.op !== 'update' || d.patched.changed })),
  };
}

/** Runs the items in order: runs of plain creates as multi-row inserts, the others through their single-call code. */
async function applyItems(
  ctx: DaemonContext,
  trx: Transaction<Database>,
  items: readonly Item[],
  targets: Map<number, Target>,
  errors: ItemError[],
  now: number,
): Promise<Done[]> {
  const done: Done[] = [];
  const created = new Map<number, number>();
  let plain: Array<Extract<Item, { op: 'create' }>> = [];
  const flush = async () => {
    for (const [index, id] of await insertPlain(ctx, trx, plain, errors, now)) created.set(index, id);
    for (const c of plain)
      if (created.has(c.index)) done.push({ index: c.index, op: 'create', id: created.get(c.index)!, name: c.body.name });
    plain = [];
  };
  for (const item of items) {
    if (item.op === 'create' && plainCreate(item.body)) {
      plain.push(item);
      continue;
    }
    await flush();
    try {
      if (item.op === 'create') {
        const row = await insertResource(ctx, trx, item.body);
        created.set(item.index, row.id);
        done.push({ index: item.index, op: 'create', id: row.id, name: row.name });
        continue;
      }
      const target = targets.get(item.index)!;
      const id = target.id ?? created.get(target.createdBy);
      if (id === undefined) throw new HttpError(404, 'not-found', `The resource of item ${target.createdBy} was refused`);
      if (item.op === 'update') {
        const patched = await patchResource(ctx, trx, id, item.body, now);
        done.push({ index: item.index, op: 'update', id, name: patched.row.name, patched, regrouped: item.body.groupIds !== undefined });
      } else {
        const name = (await trx.selectFrom('resources').select('name').where('id', '=', id).executeTakeFirst())?.name ?? '';
        const incidents = await deleteResourceRows(trx, id);
        if (incidents === false) throw new HttpError(404, 'not-found', `Resource ${id} does not exist`);
        done.push({ index: item.index, op: 'delete', id, name, incidents });
      }
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      const prefix = item.op === 'create' ? '/resource' : item.op === 'update' && err.errors?.length ? '/patch' : '';
      errors.push(...itemErrors(item.index, prefix, err));
    }
  }
  await flush();
  return done.sort((a, b) => a.index - b.index);
}

/** After the commit, in bulk: visibility first (the events' filter reads it), then incidents, the bus and status changes. */
async function announce(state: MonitoringState, ctx: DaemonContext, done: readonly Done[], now: number): Promise<void> {
  const seen = done.filter((d) => d.op === 'create' || (d.op === 'update' && d.patched.changed && d.regrouped)).map((d) => d.id);
  if (seen.length > 0) await state.visibility.refreshMany(seen);
  for (const d of done) {
    if (d.op === 'create') ctx.bus.emit('resource.changed', { id: d.id });
    else if (d.op === 'update') announceUpdate(ctx, d.patched, now);
    else {
      publishIncidents(ctx, d.incidents); // while the visibility cache still knows the resource
      state.visibility.forget(d.id);
      ctx.bus.emit('resource.deleted', { id: d.id });
    }
  }
}

/** The problem for a refused batch: the items' own status when they share one, else 400. */
function refusal(errors: ItemError[], total: number): HttpError {
  errors.sort((a, b) => a.index - b.index);
  const statuses = new Set(errors.map((e) => e.status));
  const status = statuses.size === 1 ? [...statuses][0] : 400;
  const items = new Set(errors.map((e) => e.index)).size;
  const first = errors[0];
  const detail = `${items} of ${total} items refused, nothing was applied; item ${first.index}${first.field ? ` ${first.field}` : ''}: ${first.message}`;
  return new HttpError(status, 'batch-refused', detail, { errors });
}
