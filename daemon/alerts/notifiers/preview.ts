import type { notifierOperations } from '../../../src/api/ops/notifiers.ts';
import type { NotifierType } from '../../../src/notifier-fields.ts';
import type { Handler } from '../../http/bind.ts';
import { escapeFor } from './escapes.ts';
import { testMessage } from './samples.ts';
import { notifierRow } from './store.ts';
import { renderWithTemplates } from './templates.ts';

/**
 * `POST /admin/api/notifiers/{id}/preview`: what the notifier would send, without sending: the
 * sample alert of `event` (else an INCIDENT_OPENED when there are templates, else the plain test message), through the templates given (else the
 * notifier's own). The title and body are as the channel receives them, escaped for it. A template
 * that does not parse is not a 400 here, unlike at create: trying one is what a preview is for.
 */
export const previewNotifier: Handler<(typeof notifierOperations)['previewNotifier']> = async ({ ctx, params, body }) => {
  const row = await notifierRow(ctx, params.id);
  const type = row.type as NotifierType;
  const n = {
    name: row.name,
    type,
    titleTemplate: body?.titleTemplate ?? row.title_template,
    bodyTemplate: body?.bodyTemplate ?? row.body_template,
  };
  // Someone previewing templates wants to see them: without an event, an opening (the plain test
  // message is never templated) unless there is no template to show.
  const templated = n.titleTemplate !== null || n.bodyTemplate !== null;
  const message = testMessage('msg_preview', body?.event ?? (templated ? 'INCIDENT_OPENED' : undefined), Date.now());
  const { rendered, templateError } = renderWithTemplates(n, message, { publicUrl: ctx.config.publicUrl ?? null });
  const forChannel = rendered.markup ? (s: string) => s : escapeFor(type);
  return { title: forChannel(rendered.title), body: forChannel(rendered.text), templateError };
};
