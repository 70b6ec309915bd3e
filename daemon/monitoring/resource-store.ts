import type { Kysely, Transaction } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { ResourceCreate, ResourceType } from '../../src/api/schemas/monitoring.ts';
import { badRequest, conflict, invalidField } from '../../src/errors.ts';
import { validateConditions } from '../../src/probes/conditions/index.ts';
import type { Database } from '../store/schema.ts';
import type { GroupRef } from './mappers.ts';
import { checkRequestFields } from './http-check-rules.ts';
import { createOptions } from './check-option-rules.ts';
import { checkTarget } from './targets.ts';
import { checkTypeFields, createSchedule } from '../push/store/push-fields.ts';
import { checkSlug } from '../push/store/slugs.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** Rows per `IN (…)` list, under every dialect's bind-parameter limit. */
const CHUNK = 500;

/** Groups of the given resources (all resources when ids is undefined), each list sorted by id. */
export async function groupsOf(db: Db, ids?: number[]): Promise<Map<number, GroupRef[]>> {
  const out = new Map<number, GroupRef[]>();
  const parts: Array<number[] | undefined> = ids === undefined ? [undefined] : [];
  if (ids) for (let i = 0; i < ids.length; i += CHUNK) parts.push(ids.slice(i, i + CHUNK));
  for (const part of parts) {
    let query = db
      .selectFrom('resource_groups')
      .innerJoin('groups', 'groups.id', 'resource_groups.group_id')
      .select(['resource_groups.resource_id as resourceId', 'groups.id as id', 'groups.name as name']);
    if (part) query = query.where('resource_groups.resource_id', 'in', part);
    for (const row of await query.orderBy('groups.id').execute()) {
      const list = out.get(row.resourceId) ?? [];
      list.push({ id: row.id, name: row.name });
      out.set(row.resourceId, list);
    }
  }
  return out;
}

/** Distinct group ids, each checked to exist: 400 naming `groupIds` otherwise. */
/** The refusal of group ids that name no group (a create's, a batch item's). */
export const noSuchGroups = (missing: number[]) => invalidField('groupIds', `no group with id ${missing.join(', ')}`);

export async function checkGroupIds(db: Db, groupIds: number[]): Promise<number[]> {
  const unique = [...new Set(groupIds)];
  if (unique.length === 0) return unique;
  const found = await db.selectFrom('groups').select('id').where('id', 'in', unique).execute();
  const known = new Set(found.map((r) => r.id));
  const missing = unique.filter((id) => !known.has(id));
  if (missing.length) throw noSuchGroups(missing);
  return unique;
}

/** 409 naming `name` when another resource has this name. */
export async function checkNameFree(db: Db, name: string, exceptId?: number): Promise<void> {
  let query = db.selectFrom('resources').select('id').where('name', '=', name);
  if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
  if (await query.executeTakeFirst()) throw conflict(`A resource named ${name} exists`, 'name');
}

/** Target and `recursive` checked against the type: 400 naming the field. */
export function checkResourceShape(type: ResourceType, target: string, recursive: boolean): void {
  if (recursive && type !== 'DOCKER') throw invalidField('recursive', 'only DOCKER resources can be recursive');
  const reason = checkTarget(type, target, recursive);
  if (reason) throw invalidField('target', `${reason} (${type} target)`);
}

/**
 * Everything a create body must meet that needs no database. `POST /admin/api/resources/test`
 * checks a body with this same function, so that a body it runs is one create would take.
 * PUSH (docs/API.md#push-checks): `target` is an optional slug, the schedule is checked at
 * `now` (the daemon's clock), and what a probe reads is refused.
 */
export function checkResourceBody(body: Static<typeof ResourceCreate>, now = Date.now()): void {
  const push = body.resourceType === 'PUSH';
  checkTypeFields(push, body);
  if (push) {
    if (body.target !== undefined) checkSlug(body.target);
    createSchedule(body, now);
  } else {
    if (body.target === undefined) throw invalidField('target', `required for ${body.resourceType} resources`);
    checkResourceShape(body.resourceType, body.target, body.recursive ?? false);
  }
  checkConditions(body.resourceType, body.conditions ?? []);
  if (!push) checkRequestFields(body.resourceType, body);
  createOptions(body.resourceType, body);
}

/** Replaces a resource's group memberships. */
export async function setGroups(db: Db, resourceId: number, groupIds: number[]): Promise<void> {
  await db.deleteFrom('resource_groups').where('resource_id', '=', resourceId).execute();
  if (groupIds.length) {
    await db
      .insertInto('resource_groups')
      .values(groupIds.map((group_id) => ({ resource_id: resourceId, group_id })))
      .execute();
  }
}

/**
 * 400 naming `conditions[i]` and the column of each condition that does not parse, or that reads a
 * placeholder the type cannot answer (docs/DECISIONS.md#probe-conditions): a condition that could
 * never hold is refused at creation, not failed on every check.
 */
export function checkConditions(type: ResourceType, list: readonly string[]): void {
  const { problems } = validateConditions(list, type);
  if (problems.length === 0) return;
  const errors = problems.map((p) => ({ field: `conditions[${p.index}]`, message: `column ${p.column}: ${p.message}` }));
  throw badRequest(`Invalid value for ${errors[0].field}: ${errors[0].message}`, errors);
}
