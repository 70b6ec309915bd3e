import { SEVERITIES } from '../../../src/notifier-fields.ts';
import type { Static } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { alertRuleOperations } from '../../../src/api/ops/alert-rules.ts';
import type { AlertRuleBody } from '../../../src/api/schemas/alert-rules.ts';
import { conflict, invalidField, notFound } from '../../../src/errors.ts';
import type { HandlersOf } from '../../http/bind.ts';
import { uniqueViolation } from '../../store/unique-violation.ts';
import type { Database } from '../../store/schema.ts';
import { enqueueCatchUp } from './catch-up.ts';
import { DEFAULT_GROUP_WAIT_SECONDS, parseRule, repeatSeconds, toAlertRule } from './rule-row.ts';

type Body = Static<typeof AlertRuleBody>;

/** Every listed id must exist now: a rule naming nothing would silently route nowhere. */
async function checkReferences(db: Kysely<Database>, body: Body): Promise<void> {
  const lists = [
    ['notifierIds', 'notifiers', body.notifierIds],
    ['resourceIds', 'resources', body.resourceIds ?? []],
    ['groupIds', 'groups', body.groupIds ?? []],
    ['agentIds', 'agents', body.agentIds ?? []],
  ] as const;
  for (const [field, table, ids] of lists) {
    if (ids.length === 0) continue;
    const found = new Set((await db.selectFrom(table).select('id').where('id', 'in', ids).execute()).map((r) => r.id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) throw invalidField(field, `no such ${table.replace(/s$/, '')}: ${missing.join(', ')}`);
  }
}

const unique = <T>(list: T[] | undefined) => JSON.stringify([...new Set(list ?? [])]);

function columns(body: Body) {
  return {
    name: body.name,
    enabled: body.enabled === false ? 0 : 1,
    events: unique(body.events),
    notifier_ids: unique(body.notifierIds),
    resource_ids: unique(body.resourceIds),
    group_ids: unique(body.groupIds),
    agent_ids: unique(body.agentIds),
    // In SEVERITIES' order, once each; all three is the same as none given.
    severities: body.severities ? JSON.stringify(SEVERITIES.filter((s) => body.severities!.includes(s))) : null,
    severity_override: body.severityOverride ?? null,
    group_wait_seconds: body.groupWaitSeconds ?? DEFAULT_GROUP_WAIT_SECONDS,
    repeat_interval_seconds: repeatSeconds(body.repeatIntervalMinutes),
  };
}

/** Handlers of `/admin/api/alert-rules`; `onChange` lets the router drop its cached rules. */
export function alertRuleHandlers(onChange: () => void): HandlersOf<typeof alertRuleOperations> {
  const taken = (err: unknown) => {
    throw uniqueViolation(err, 'name') ?? err;
  };
  return {
    async listAlertRules({ ctx }) {
      return (await ctx.db.selectFrom('alert_rules').selectAll().orderBy('id').execute()).map(toAlertRule);
    },

    async getAlertRule({ ctx, params }) {
      const row = await ctx.db.selectFrom('alert_rules').selectAll().where('id', '=', params.id).executeTakeFirst();
      if (!row) throw notFound(`Alert rule ${params.id} does not exist`);
      return toAlertRule(row);
    },

    async createAlertRule({ ctx, body }) {
      await checkReferences(ctx.db, body);
      const now = Date.now();
      const row = await ctx.db
        .transaction()
        .execute(async (trx) => {
          if (await trx.selectFrom('alert_rules').select('id').where('name', '=', body.name).executeTakeFirst()) {
            throw conflict(`An alert rule named ${body.name} exists`, 'name');
          }
          const created = await trx
            .insertInto('alert_rules')
            .values({ ...columns(body), created_at: now, updated_at: now })
            .returningAll()
            .executeTakeFirstOrThrow();
          // Incidents already open are notified through the new rule (catch-up.ts), committed with it.
          await enqueueCatchUp(trx, parseRule(created), now);
          return created;
        })
        .catch(taken);
      onChange();
      return toAlertRule(row);
    },

    async updateAlertRule({ ctx, params, body }) {
      await checkReferences(ctx.db, body);
      const row = await ctx.db
        .transaction()
        .execute(async (trx) => {
          const before = await trx.selectFrom('alert_rules').select(['id', 'enabled']).where('id', '=', params.id).executeTakeFirst();
          if (!before) throw notFound(`Alert rule ${params.id} does not exist`);
          const other = await trx
            .selectFrom('alert_rules')
            .select('id')
            .where('name', '=', body.name)
            .where('id', '!=', params.id)
            .executeTakeFirst();
          if (other) throw conflict(`An alert rule named ${body.name} exists`, 'name');
          const now = Date.now();
          const updated = await trx
            .updateTable('alert_rules')
            .set({ ...columns(body), updated_at: now })
            .where('id', '=', params.id)
            .returningAll()
            .executeTakeFirstOrThrow();
          // Enabling a rule is creating it for the router: the open incidents it covers are notified through it.
          if (Number(before.enabled) !== 1 && updated.enabled === 1) await enqueueCatchUp(trx, parseRule(updated), now);
          return updated;
        })
        .catch(taken);
      onChange();
      return toAlertRule(row);
    },

    async deleteAlertRule({ ctx, params }) {
      const result = await ctx.db.deleteFrom('alert_rules').where('id', '=', params.id).executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) throw notFound(`Alert rule ${params.id} does not exist`);
      await ctx.db.deleteFrom('alert_reminders').where('rule_id', '=', params.id).execute();
      onChange();
      return { status: 'deleted' as const };
    },
  };
}
