import { MAX_BATCH_ITEMS } from '../../src/api/schemas/resource-batch.ts';
import { HttpError, MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import type { Runtime } from '../runtime.ts';
import type { Step } from './step.ts';

/**
 * Runs the plan in order. Consecutive resource steps go to the daemon together, up to 10,000
 * per `POST /admin/api/resources/batch` (each batch all or nothing); every other step runs alone.
 * A refused step's error names it, as when each step was its own call.
 */
export async function runSteps(rt: Runtime, steps: readonly Step[]): Promise<void> {
  let pending: Step[] = [];
  const flush = async () => {
    if (pending.length > 0) await sendBatch(rt, pending);
    pending = [];
  };
  for (const step of steps) {
    if (step.run === undefined) {
      pending.push(step);
      if (pending.length === MAX_BATCH_ITEMS) await flush();
      continue;
    }
    await flush();
    try {
      await step.run();
    } catch (err) {
      throw named(err, step);
    }
  }
  await flush();
}

async function sendBatch(rt: Runtime, steps: readonly Step[]): Promise<void> {
  const items = steps.map((s) => s.batch!.item());
  try {
    const result = await rt.client.call(ops.batchResources, { body: { items } });
    result.items.forEach((r, i) => steps[i].batch!.done?.(r));
  } catch (err) {
    const refused =
      err instanceof HttpError ? (err.errors as Array<{ index?: number; field: string; message: string }> | undefined) : undefined;
    if (!refused?.length || refused[0].index === undefined) throw err;
    const lines = refused.map((e) => {
      const step = steps[e.index!];
      const field = e.field
        .replace(/^\/(resource|patch)/, '')
        .replace(/^\//, '')
        .replace(/\//g, '.');
      return `${step.action} ${step.kind} ${step.name}: ${field ? `${field}: ` : ''}${e.message}`;
    });
    const message = `${lines.length === 1 ? lines[0] : `${lines.length} refused, nothing in their batch was applied:\n  ${lines.join('\n  ')}`}`;
    throw new HttpError(err instanceof HttpError ? err.status : 400, err instanceof HttpError ? err.code : 'batch-refused', message, {
      errors: refused.map((e) => ({ field: e.field, message: e.message })),
    });
  }
}

function named(err: unknown, step: Step): unknown {
  if (err instanceof MonctlError) err.message = `${step.action} ${step.kind} ${step.name}: ${err.message}`;
  return err;
}
