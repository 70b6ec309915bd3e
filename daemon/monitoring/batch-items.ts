import type { Static } from '@sinclair/typebox';
import { ResourceCreate, ResourcePatch } from '../../src/api/schemas/monitoring.ts';
import { BATCH_OPS, type BatchOp } from '../../src/api/schemas/resource-batch.ts';
import { HttpError } from '../../src/errors.ts';
import { checker, fieldErrors } from '../http/validate.ts';
import { checkResourceBody } from './resource-store.ts';

/** One refused item: `field` is a JSON pointer into the item (`/resource/target`). */
export interface ItemError {
  index: number;
  field: string;
  status: number;
  message: string;
}

export type Ref = { id: number; name?: undefined } | { name: string; id?: undefined };
export type Item =
  | { index: number; op: 'create'; body: Static<typeof ResourceCreate> }
  | { index: number; op: 'update'; ref: Ref; body: Static<typeof ResourcePatch> }
  | { index: number; op: 'delete'; ref: Ref };

const KEYS: Record<BatchOp, string[]> = { create: ['op', 'resource'], update: ['op', 'id', 'name', 'patch'], delete: ['op', 'id', 'name'] };

/** `groupIds[1].x` (the validators' dotted form) under `/patch` to `/patch/groupIds/1/x`. */
export function pointer(prefix: string, dotted: string): string {
  if (dotted === 'body' || dotted === '') return prefix;
  const parts = dotted.match(/[^.[\]]+/g) ?? [];
  return `${prefix}/${parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
}

/** The item errors an HttpError thrown by a single-resource check stands for, its fields under `prefix`. */
export function itemErrors(index: number, prefix: string, err: HttpError): ItemError[] {
  if (!err.errors?.length) return [{ index, field: prefix, status: err.status, message: err.message }];
  return err.errors.map((e) => ({ index, field: pointer(prefix, e.field), status: err.status, message: e.message }));
}

const refused = (index: number, field: string, message: string): ItemError => ({ index, field, status: 400, message });

/**
 * Each item's shape and everything the single call checks without the database (the schema,
 * then checkResourceBody for a create), in order; what passes is returned for the store's checks.
 */
export function checkItems(raw: readonly unknown[], now: number): { items: Item[]; errors: ItemError[] } {
  const items: Item[] = [];
  const errors: ItemError[] = [];
  raw.forEach((value, index) => {
    const before = errors.length;
    const item = shapeOf(value, index, errors);
    if (item && errors.length === before) items.push(item);
  });
  for (const item of items) {
    if (item.op !== 'create') continue;
    try {
      checkResourceBody(item.body, now);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      errors.push(...itemErrors(item.index, '/resource', err));
    }
  }
  const bad = new Set(errors.map((e) => e.index));
  return { items: items.filter((i) => !bad.has(i.index)), errors };
}

function shapeOf(value: unknown, index: number, errors: ItemError[]): Item | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    errors.push(refused(index, '', 'must be an object: {op, resource} or {op, id | name, patch}'));
    return undefined;
  }
  const v = value as Record<string, unknown>;
  const op = v.op as BatchOp;
  if (!BATCH_OPS.includes(op)) {
    errors.push(refused(index, '/op', `must be one of: ${BATCH_OPS.join(', ')}`));
    return undefined;
  }
  // Twenty at most, as the schema's errors: an item cannot make the answer unbounded.
  const unknown = Object.keys(v).filter((key) => !KEYS[op].includes(key));
  for (const key of unknown.slice(0, 20)) errors.push(refused(index, pointer('', key), `is not a field of ${op}`));
  if (op === 'create') return { index, op, body: checked(ResourceCreate, v.resource, index, '/resource', errors) };
  const ref = refOf(v, index, errors);
  if (op === 'delete') return ref && { index, op, ref };
  return ref && { index, op, ref, body: checked(ResourcePatch, v.patch, index, '/patch', errors) };
}

function checked<T>(
  schema: typeof ResourceCreate | typeof ResourcePatch,
  value: unknown,
  index: number,
  prefix: string,
  errors: ItemError[],
) {
  if (value === undefined) errors.push(refused(index, prefix, 'is required'));
  else if (!checker(schema).Check(value))
    for (const e of fieldErrors(schema, value, 'body')) errors.push(refused(index, pointer(prefix, e.field), e.message));
  return value as T;
}

/** `id` or `name`, exactly one. */
function refOf(v: Record<string, unknown>, index: number, errors: ItemError[]): Ref | undefined {
  if ((v.id === undefined) === (v.name === undefined)) {
    errors.push(refused(index, v.id === undefined ? '/id' : '/name', 'name the resource by id or by name, one of them'));
    return undefined;
  }
  if (v.id !== undefined) {
    if (Number.isSafeInteger(v.id) && (v.id as number) > 0) return { id: v.id as number };
    errors.push(refused(index, '/id', 'must be a positive integer'));
    return undefined;
  }
  if (typeof v.name === 'string' && v.name.length > 0) return { name: v.name };
  errors.push(refused(index, '/name', 'must be a resource name'));
  return undefined;
}
