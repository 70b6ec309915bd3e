import type { OutgoingMessage } from '../../types.ts';
import type { Channel } from '../channel.ts';
import type { LoadedNotifier } from '../config-types.ts';
import { postJson } from '../http-post.ts';
import { type RenderedMessage, MAX_NAMED } from '../render.ts';
import { causeText, durationOf, humanDuration, nameList } from '../render-parts.ts';
import { backslashEscape, escapeOutsideUrls, providerError, truncate, webhookUrlProblem, withoutLinkLine } from './chat-text.ts';

/**
 * TEAMS: a Workflows (Power Automate) webhook, "Post to a channel when a webhook request is
 * received", which takes a message whose attachment is an Adaptive Card
 * (https://adaptivecards.io/explorer/) and answers 202 Accepted. The Office 365 connectors and
 * their MessageCard are retired: their URLs are refused.
 */
const COLOURS = { problem: 'Attention', recovery: 'Good', test: 'Accent' } as const;
/** Workflows take 28 KB per card in a channel: the text is cut well before. */
const MAX_TEXT = 8000;
const MAX_FACT = 1000;
/** The retired connectors' hosts (outlook.office.com/webhook, *.webhook.office.com). */
const CONNECTOR = /(^|\.)webhook\.office\.com$|^outlook\.office(365)?\.com$/i;

/** Adaptive Card TextBlock markdown (CommonMark's subset): emphasis, links, code, entities (`&amp;`), lists, headings. */
const escapeMarkdown = (text: string) => backslashEscape(text, /[\\*_~`<>[\]()&]/g);
const escapeText = (text: string) => escapeOutsideUrls(text, escapeMarkdown);

/** What the card lists under the text: the resources, the cause, how long (plain values, escaped). */
function facts(message: OutgoingMessage, now: number): Array<{ title: string; value: string }> {
  const items = message.items;
  if (items.length === 0) return [];
  const out: Array<{ title: string; value: string }> = [];
  const names = items.map((i) => i.subject.name);
  out.push({ title: items.length === 1 ? 'Resource' : `Resources (${items.length})`, value: nameList(names, MAX_NAMED) });
  const causes = [...new Set(items.map(causeText).filter((c): c is string => c !== null))];
  if (causes.length) out.push({ title: 'Cause', value: nameList(causes, 3) });
  const lasted = items.map((i) => durationOf(i, now)).filter((d): d is number => d !== null);
  if (lasted.length) out.push({ title: items.length === 1 ? 'Duration' : 'Longest', value: humanDuration(Math.max(...lasted)) });
  const severities = [...new Set(items.map((i) => i.severity))];
  out.push({ title: 'Severity', value: severities.join(', ') });
  return out.map((f) => ({ title: f.title, value: truncate(escapeText(f.value), MAX_FACT) }));
}

export function teamsBody(message: OutgoingMessage, rendered: RenderedMessage, now = Date.now()): string {
  const link = rendered.link;
  const title = rendered.markup ? rendered.title : escapeText(rendered.title);
  const text = rendered.markup ? rendered.text : escapeText(withoutLinkLine(rendered.text, link));
  const factList = facts(message, now);
  const card = {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: '1.4',
    msteams: { width: 'Full' },
    body: [
      { type: 'TextBlock', text: truncate(title, 500), weight: 'Bolder', size: 'Medium', color: COLOURS[rendered.tone], wrap: true },
      { type: 'TextBlock', text: truncate(text, MAX_TEXT), wrap: true },
      ...(factList.length ? [{ type: 'FactSet', facts: factList }] : []),
    ],
    ...(link ? { actions: [{ type: 'Action.OpenUrl', title: 'Open in monctl', url: link }] } : {}),
  };
  return JSON.stringify({
    type: 'message',
    attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: card }],
  });
}

export const teams: Channel = {
  escape: escapeText,
  check(flat, _out, err) {
    const problem = webhookUrlProblem(flat.url!);
    if (problem) err('url', problem);
    else if (CONNECTOR.test(new URL(flat.url!).hostname))
      err('url', 'is an Office 365 connector URL, which Microsoft retired: create a Workflows webhook in the channel instead');
  },
  send: (n: LoadedNotifier, message, rendered, io) =>
    postJson(n.secrets.url!, teamsBody(message, rendered), {}, io, { inspect: providerError }),
};
