import { Type } from '@sinclair/typebox';
import { defineOperation } from '../operation.ts';
import { Deleted, IdParams } from '../schemas/common.ts';
import { StatusSubscriber, SubscriberParams, WebhookSubscriberCreate, WebhookSubscriberCreated } from '../schemas/status-subscribers.ts';

const tag = 'Status pages';

/** A status page's subscribers, ADMIN only: readers sign themselves up on the page (docs/API.md#subscriptions). */
export const statusSubscriberOperations = {
  listStatusPageSubscribers: defineOperation({
    id: 'listStatusPageSubscribers',
    method: 'GET',
    path: '/admin/api/status-pages/{id}/subscribers',
    tag,
    access: 'admin',
    summary: "A page's subscribers, with their addresses",
    description:
      'Email readers (pending until they confirm) and webhooks, oldest first. Addresses are shown to ADMIN only, and nowhere public.',
    params: IdParams,
    response: Type.Array(StatusSubscriber),
    errors: [404],
  }),
  addStatusPageWebhookSubscriber: defineOperation({
    id: 'addStatusPageWebhookSubscriber',
    method: 'POST',
    path: '/admin/api/status-pages/{id}/subscribers',
    tag,
    access: 'admin',
    summary: 'Add a webhook subscriber',
    description:
      'The webhook gets every posted update (or those about its picks), signed with its own `whsec_` secret as notifier webhooks are. The secret is in this answer only; it is stored sealed. The same URL twice on a page: 409.',
    params: IdParams,
    body: WebhookSubscriberCreate,
    response: WebhookSubscriberCreated,
    errors: [404, 409],
  }),
  deleteStatusPageSubscriber: defineOperation({
    id: 'deleteStatusPageSubscriber',
    method: 'DELETE',
    path: '/admin/api/status-pages/{id}/subscribers/{subscriberId}',
    tag,
    access: 'admin',
    summary: 'Remove a subscriber',
    description: 'The row goes, address and all; messages not yet delivered to it are dropped.',
    params: SubscriberParams,
    response: Deleted,
    errors: [404],
  }),
} as const;
