import type { notifierOperations } from '../../../src/api/ops/notifiers.ts';
import type { NotifierType } from '../../../src/api/schemas/notifiers.ts';
import { conflict } from '../../../src/errors.ts';
import type { DaemonContext } from '../../context.ts';
import { uniqueViolation } from '../../store/unique-violation.ts';
import type { HandlersOf } from '../../http/bind.ts';
import { deliveryHandlers } from './deliveries.ts';
import { previewNotifier } from './preview.ts';
import { generateSigningSecret } from './signing.ts';
import { notifierRow, type NotifierRow, openSecrets, sealSecrets, toNotifier } from './store.ts';
import { checkTemplates } from './templates.ts';
import { applyPatch } from './update.ts';
import { type FlatConfig, normalise } from './validate.ts';

type Ops = typeof notifierOperations;

const view = (ctx: DaemonContext, row: NotifierRow) => toNotifier(row, openSecrets(ctx, row.secrets_enc));

/** The alert rules that send to a notifier (their notifier_ids are JSON lists). */
async function rulesUsing(ctx: DaemonContext, id: number): Promise<string[]> {
  const rules = await ctx.db.selectFrom('alert_rules').select(['name', 'notifier_ids']).execute();
  return rules.filter((r) => (JSON.parse(r.notifier_ids) as number[]).includes(id)).map((r) => r.name);
}

/** Handlers of `/admin/api/notifiers`: CRUD with sealed secrets, the test message, the signing secret and the deliveries. */
export const notifierHandlers: HandlersOf<Ops> = {
  async listNotifiers({ ctx }) {
    const rows = await ctx.db.selectFrom('notifiers').selectAll().orderBy('id').execute();
    return rows.map((row) => view(ctx, row));
  },

  async getNotifier({ ctx, params }) {
    return view(ctx, await notifierRow(ctx, params.id));
  },

  async createNotifier({ ctx, body }) {
    const type = body.type as NotifierType;
    checkTemplates(body);
    const input = { ...body.config } as FlatConfig;
    const generated = type === 'WEBHOOK' && input.signingSecret === undefined ? generateSigningSecret() : undefined;
    if (generated) input.signingSecret = generated;
    const { config, secrets } = normalise(type, input);
    const now = Date.now();
    const row = await ctx.db
      .insertInto('notifiers')
      .values({
        name: body.name,
        type,
        enabled: body.enabled === false ? 0 : 1,
        config: JSON.stringify(config),
        secrets_enc: sealSecrets(ctx, secrets),
        title_template: body.titleTemplate ?? null,
        body_template: body.bodyTemplate ?? null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((err: unknown) => {
        throw uniqueViolation(err, 'name') ?? err;
      });
    ctx.log.info({ notifier: row.name, type }, 'notifier created');
    return { ...toNotifier(row, secrets), ...(generated ? { signingSecret: generated } : {}) };
  },

  async updateNotifier({ ctx, params, body }) {
    checkTemplates(body);
    const row = await notifierRow(ctx, params.id);
    const type = row.type as NotifierType;
    const values: {
      name?: string;
      enabled?: number;
      config?: string;
      secrets_enc?: string | null;
      title_template?: string | null;
      body_template?: string | null;
      updated_at: number;
    } = { updated_at: Date.now() };
    if (body.titleTemplate !== undefined) values.title_template = body.titleTemplate;
    if (body.bodyTemplate !== undefined) values.body_template = body.bodyTemplate;
    if (body.name !== undefined) values.name = body.name;
    if (body.enabled !== undefined) values.enabled = body.enabled ? 1 : 0;
    if (body.config !== undefined) {
      const next = applyPatch(type, JSON.parse(row.config), openSecrets(ctx, row.secrets_enc) ?? {}, body.config);
      values.config = JSON.stringify(next.config);
      values.secrets_enc = sealSecrets(ctx, next.secrets);
    }
    // Conditional on the row read: a concurrent update fails rather than being half overwritten.
    const updated = await ctx.db
      .updateTable('notifiers')
      .set(values)
      .where('id', '=', row.id)
      .where('updated_at', '=', row.updated_at)
      .returningAll()
      .executeTakeFirst()
      .catch((err: unknown) => {
        throw uniqueViolation(err, 'name') ?? err;
      });
    if (!updated) throw conflict(`Notifier ${row.name} was changed at the same time; read it again and retry`);
    return view(ctx, updated);
  },

  async deleteNotifier({ ctx, params }) {
    const row = await notifierRow(ctx, params.id);
    const rules = await rulesUsing(ctx, row.id);
    if (rules.length) throw conflict(`Notifier ${row.name} is used by the alert rules ${rules.join(', ')}: remove it from them first`);
    await ctx.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('notification_attempts').where('notifier_id', '=', row.id).execute();
      await trx.deleteFrom('notifiers').where('id', '=', row.id).execute();
    });
    ctx.log.info({ notifier: row.name }, 'notifier deleted');
    return { status: 'deleted' as const };
  },

  ...deliveryHandlers,
  previewNotifier,
};
