import type { Selectable } from 'kysely';
import type { statusSubscriberOperations } from '../../../src/api/ops/status-subscribers.ts';
import { conflict, invalidField, notFound } from '../../../src/errors.ts';
import { formatDateTime } from '../../../src/time.ts';
import { generateSigningSecret } from '../../alerts/notifiers/signing.ts';
import type { HandlersOf } from '../../http/bind.ts';
import type { StatusSubscribersTable } from '../../store/schema.ts';
import { parseIds } from '../json-ids.ts';
import type { PageTable } from '../page-table.ts';
import type { StatusState } from '../state.ts';
import { subscriberBox } from './secret.ts';
import { newNonce } from './tokens.ts';

type Ops = typeof statusSubscriberOperations;

const at = (ms: number | null) => (ms === null ? null : formatDateTime(ms));

function toSubscriber(row: Selectable<StatusSubscribersTable>) {
  return {
    id: row.id,
    kind: row.kind,
    address: row.address,
    resourceIds: parseIds(row.resource_ids),
    groupIds: parseIds(row.group_ids),
    confirmed: row.confirmed_at !== null,
    createdAt: formatDateTime(row.created_at),
    confirmedAt: at(row.confirmed_at),
    confirmSentAt: at(row.confirm_sent_at),
  };
}

/** A webhook URL as stored and matched: absolute http(s), as WHATWG URL serialises it. */
function webhookUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidField('url', 'must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidField('url', 'must be an http or https URL');
  return url.href;
}

/** `/admin/api/status-pages/{id}/subscribers`: list, add a webhook, remove. */
export function subscriberHandlers(state: StatusState, pages: PageTable): HandlersOf<Ops> {
  const { ctx } = state;
  const pageOf = (id: number) => {
    const page = pages.all.find((p) => p.id === id);
    if (!page) throw notFound(`Status page ${id} does not exist`);
    return page;
  };
  return {
    async listStatusPageSubscribers({ params }) {
      pageOf(params.id);
      const rows = await ctx.db.selectFrom('status_subscribers').selectAll().where('page_id', '=', params.id).orderBy('id').execute();
      return rows.map(toSubscriber);
    },

    async addStatusPageWebhookSubscriber({ params, body }) {
      const page = pageOf(params.id);
      const key = webhookUrl(body.url);
      // What a logged-in reader sees on the page: picks of anything else would never match.
      const view = await state.view(page, 'user');
      const groups = new Set(view.summary.groups.map((g) => g.id));
      const resources = new Set(view.summary.groups.flatMap((g) => g.resources.map((r) => r.id)));
      for (const id of body.groupIds ?? []) if (!groups.has(id)) throw invalidField('groupIds', `group ${id} is not on this page`);
      for (const id of body.resourceIds ?? [])
        if (!resources.has(id)) throw invalidField('resourceIds', `resource ${id} is not on this page`);
      const secret = generateSigningSecret();
      const now = ctx.clock.now();
      const row = await ctx.db
        .insertInto('status_subscribers')
        .values({
          page_id: page.id,
          kind: 'WEBHOOK',
          address: body.url,
          address_key: key,
          resource_ids: JSON.stringify([...new Set(body.resourceIds ?? [])]),
          group_ids: JSON.stringify([...new Set(body.groupIds ?? [])]),
          token_nonce: newNonce(),
          secret_enc: subscriberBox(ctx.installSecret).seal(secret),
          created_at: now,
          confirmed_at: now,
        })
        .onConflict((oc) => oc.columns(['page_id', 'kind', 'address_key']).doNothing())
        .returningAll()
        .executeTakeFirst();
      if (!row) throw conflict(`Webhook ${key} already subscribes to ${page.slug}`, 'url');
      return { ...toSubscriber(row), secret };
    },

    async deleteStatusPageSubscriber({ params }) {
      const result = await ctx.db
        .deleteFrom('status_subscribers')
        .where('id', '=', params.subscriberId)
        .where('page_id', '=', params.id)
        .executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) throw notFound(`Status page ${params.id} has no subscriber ${params.subscriberId}`);
      return { status: 'deleted' as const };
    },
  };
}
