import { Type } from '@sinclair/typebox';
import { defineOperation } from '../operation.ts';
import { Deleted, IdParams, PageQuery } from '../schemas/common.ts';
import {
  Notifier,
  NotifierCreate,
  NotifierCreated,
  NotifierDelivery,
  NotifierPatch,
  NotifierPreview,
  NotifierPreviewRequest,
  NotifierTest,
  NotifierTestResult,
  SigningSecret,
} from '../schemas/notifiers.ts';

const tag = 'Notifiers';

/** `/admin/api/notifiers`: notification channels, their test message and their delivery log (docs/API.md#notifiers). */
export const notifierOperations = {
  listNotifiers: defineOperation({
    id: 'listNotifiers',
    method: 'GET',
    path: '/admin/api/notifiers',
    tag,
    access: 'admin',
    summary: 'Notification channels by id (secrets never returned)',
    response: Type.Array(Notifier),
  }),
  getNotifier: defineOperation({
    id: 'getNotifier',
    method: 'GET',
    path: '/admin/api/notifiers/{id}',
    tag,
    access: 'admin',
    summary: 'One notification channel',
    params: IdParams,
    response: Notifier,
    errors: [404],
  }),
  createNotifier: defineOperation({
    id: 'createNotifier',
    method: 'POST',
    path: '/admin/api/notifiers',
    tag,
    access: 'admin',
    summary: 'Create a notification channel',
    description:
      'Names are unique (409). `config` takes the fields of the type (WEBHOOK: url, headers, signingSecret; SLACK: url; ' +
      'NTFY: url, topic, priority, token; EMAIL: host, port, security, username, password, from, to, skipTlsVerify, tlsCa; ' +
      'the other types as in docs/API.md#notifiers). ' +
      'Secrets are sealed at rest. A WEBHOOK without a signingSecret gets one, returned in this response only.',
    body: NotifierCreate,
    response: NotifierCreated,
    errors: [409],
  }),
  updateNotifier: defineOperation({
    id: 'updateNotifier',
    method: 'PATCH',
    path: '/admin/api/notifiers/{id}',
    tag,
    access: 'admin',
    summary: 'Change a notification channel',
    description:
      '`config` is merged (JSON merge patch: null removes an optional field or header). A secret left out is kept; ' +
      'but when the destination changes (url, or host and port) the secrets sent to it must be given again, ' +
      'so that a stored secret is never sent somewhere new. The type cannot change.',
    params: IdParams,
    body: NotifierPatch,
    response: Notifier,
    errors: [404, 409],
  }),
  deleteNotifier: defineOperation({
    id: 'deleteNotifier',
    method: 'DELETE',
    path: '/admin/api/notifiers/{id}',
    tag,
    access: 'admin',
    summary: 'Delete a notification channel',
    description: '409 while an alert rule sends to it.',
    params: IdParams,
    response: Deleted,
    errors: [404, 409],
  }),
  testNotifier: defineOperation({
    id: 'testNotifier',
    method: 'POST',
    path: '/admin/api/notifiers/{id}/test',
    tag,
    access: 'admin',
    summary: 'Send a test message now',
    description:
      'Waits for the delivery (one attempt, recorded in the deliveries) and says how it went; a failed delivery is still 200. ' +
      'With `event`, a sample alert of that kind is sent through the templates instead of the plain test message.',
    params: IdParams,
    body: NotifierTest,
    bodyOptional: true,
    response: NotifierTestResult,
    errors: [404],
  }),
  previewNotifier: defineOperation({
    id: 'previewNotifier',
    method: 'POST',
    path: '/admin/api/notifiers/{id}/preview',
    tag,
    access: 'admin',
    summary: 'Render a sample message without sending it',
    description: 'With the notifier templates, or those given; a template that fails gives the default message and says why.',
    params: IdParams,
    body: NotifierPreviewRequest,
    bodyOptional: true,
    response: NotifierPreview,
    errors: [404],
  }),
  rotateNotifierSigningSecret: defineOperation({
    id: 'rotateNotifierSigningSecret',
    method: 'POST',
    path: '/admin/api/notifiers/{id}/signing-secret',
    tag,
    access: 'admin',
    summary: 'Replace the signing secret of a WEBHOOK',
    description: 'The new secret is in this response only; the old one stops at once.',
    params: IdParams,
    response: SigningSecret,
    errors: [404, 409],
  }),
  listNotifierDeliveries: defineOperation({
    id: 'listNotifierDeliveries',
    method: 'GET',
    path: '/admin/api/notifiers/{id}/deliveries',
    tag,
    access: 'admin',
    summary: 'Delivery attempts, newest first',
    description: '`limit` entries older than `before` (an id), with `Link: rel="next"` while more remain.',
    params: IdParams,
    query: PageQuery,
    response: Type.Array(NotifierDelivery),
    errors: [404],
  }),
} as const;
