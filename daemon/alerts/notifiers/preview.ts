import type { notifierOperations } from '../../../src/api/ops/notifiers.ts';
import type { Handler } from '../../http/bind.ts';
import { renderMessage } from './render.ts';
import { notifierRow } from './store.ts';

/**
 * `POST /admin/api/notifiers/{id}/preview`: a sample message rendered as the notifier would send
 * it, without sending. For now the default test message only: templates and sample events
 * come with docs/API.md#message-templates.
 */
export const previewNotifier: Handler<(typeof notifierOperations)['previewNotifier']> = async ({ ctx, params }) => {
  const row = await notifierRow(ctx, params.id);
  const rendered = renderMessage({ id: 'msg_preview', items: [], test: true }, { publicUrl: ctx.config.publicUrl, notifierName: row.name });
  return { title: rendered.title, body: rendered.text, templateError: null };
};
