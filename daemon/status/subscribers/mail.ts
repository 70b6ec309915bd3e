import type { SmtpMail } from '../../alerts/notifiers/email.ts';
import { esc } from '../render/escape.ts';
import type { DeliveryContent } from './content.ts';

const STATES: Record<string, string> = {
  investigating: 'Investigating',
  identified: 'Identified',
  monitoring: 'Monitoring',
  resolved: 'Resolved',
};
const IMPACTS: Record<string, string> = { none: 'None', minor: 'Minor', major: 'Major', critical: 'Critical' };

/** `2026-11-28 15:04 UTC`: mail readers are anywhere, and the page shows UTC too. */
const utc = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * The mail a delivery sends to an EMAIL subscriber, in text and HTML. Every mail but the
 * confirmation carries the reader's own `List-Unsubscribe` link and RFC 8058's
 * `List-Unsubscribe-Post: List-Unsubscribe=One-Click`, so that mail clients offer a one-click
 * unsubscribe (a POST the unsubscribe endpoint takes without a page). Throws when there are no
 * links to put in it (no --public-url): such a mail is never sent.
 */
export function composeMail(c: DeliveryContent): SmtpMail {
  const { page, confirm, unsubscribe } = c.links;
  if (!page || !confirm || !unsubscribe) throw new Error('--public-url is not set: subscriber mail needs its links');
  const messageId = `<${c.delivery.delivery_key}@monctl>`;
  const headers: Record<string, string> = { 'X-Monctl-Message-Id': c.delivery.delivery_key, 'Auto-Submitted': 'auto-generated' };
  if (c.kind === 'CONFIRM') {
    const text = [
      `Someone, hopefully you, asked for news of ${c.page.title} at this address.`,
      '',
      `To confirm, open this link and press the button: ${confirm}`,
      '',
      'If it was not you, ignore this mail: nothing more will be sent to you.',
    ].join('\n');
    const html = doc(
      `<p>Someone, hopefully you, asked for news of <strong>${esc(c.page.title)}</strong> at this address.</p>` +
        `<p><a href="${esc(confirm)}">Confirm the subscription</a></p>` +
        '<p>If it was not you, ignore this mail: nothing more will be sent to you.</p>',
    );
    return { to: c.subscriber.address, subject: `Confirm your subscription to ${c.page.title}`, text, html, messageId, headers };
  }
  headers['List-Unsubscribe'] = `<${unsubscribe}>`;
  headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
  headers['List-Id'] = `${c.page.title.replace(/[<>\r\n"]/g, '')} <${c.page.slug}.status.monctl>`;
  const body = c.kind === 'INCIDENT_UPDATE' ? incidentParts(c) : maintenanceParts(c);
  const footer = `You get this mail because you subscribed to ${c.page.title}.`;
  const text = [body.text, '', `Status page: ${page}`, '', footer, `Unsubscribe: ${unsubscribe}`].join('\n');
  const html = doc(
    `${body.html}<p><a href="${esc(page)}">${esc(c.page.title)}</a></p>` +
      `<hr><p style="color:#555;font-size:small">${esc(footer)} <a href="${esc(unsubscribe)}">Unsubscribe</a></p>`,
  );
  return { to: c.subscriber.address, subject: `[${c.page.title}] ${body.subject}`, text, html, messageId, headers };
}

/** The incident's title, impact, the update's state, time and message (Markdown as posted; HTML as sanitised). */
function incidentParts(c: DeliveryContent) {
  const incident = c.incident!;
  const update = c.update!;
  const state = STATES[update.state] ?? update.state;
  const impact = IMPACTS[incident.impact] ?? incident.impact;
  return {
    subject: `${incident.title}: ${state}`,
    text: [incident.title, `${state} · impact ${impact} · ${utc(update.created_at)}`, '', update.message].join('\n'),
    html:
      `<h1 style="font-size:1.25em">${esc(incident.title)}</h1>` +
      `<p><strong>${esc(state)}</strong> · impact ${esc(impact)} · ${esc(utc(update.created_at))}</p>` +
      `<div>${update.message_html}</div>`,
  };
}

/** The notice's title, its window and its message; a payload's own title and message when it names no notice. */
function maintenanceParts(c: DeliveryContent) {
  const title = c.notice?.title ?? String(c.payload.title);
  const message = c.notice?.message ?? (typeof c.payload.message === 'string' ? c.payload.message : '');
  const window =
    c.notice?.startsAt != null && c.notice.endsAt != null ? `From ${utc(c.notice.startsAt)} to ${utc(c.notice.endsAt)}` : 'Scheduled';
  return {
    subject: `Scheduled maintenance: ${title}`,
    text: [title, window, '', message].join('\n'),
    html:
      `<h1 style="font-size:1.25em">${esc(title)}</h1><p>${esc(window)}</p>` +
      (c.notice ? `<div>${c.notice.message_html}</div>` : `<p style="white-space:pre-wrap">${esc(message)}</p>`),
  };
}

const doc = (body: string) =>
  `<!doctype html><html><body style="font-family:system-ui,sans-serif;line-height:1.4;max-width:40em">${body}</body></html>`;
