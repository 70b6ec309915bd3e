import type { NotifierType } from '../../../src/notifier-fields.ts';
import type { AlertItem, OutgoingMessage } from '../types.ts';
import { durationOf, humanDuration, iso, itemLink } from './render-parts.ts';
import type { RenderedMessage } from './render.ts';

/**
 * The variables a message template sees (docs/API.md#message-templates): plain data, copied out
 * of the message so that a template reads values and nothing else (no functions, no prototypes:
 * the engine runs with `ownPropertyOnly`). Every field is always present, null when unknown, so
 * that `{% if alert.cause %}` is how a template asks.
 */
export interface TemplateScope {
  title: string;
  text: string;
  tone: RenderedMessage['tone'];
  link: string;
  count: number;
  counts: RenderedMessage['summary'];
  alerts: TemplateAlert[];
  alert: TemplateAlert | null;
  notifier: { name: string; type: NotifierType };
  test: boolean;
  now: string;
}

export interface TemplateAlert {
  kind: AlertItem['kind'];
  severity: AlertItem['severity'];
  reminder: boolean;
  subject: { type: AlertItem['subject']['type']; id: number; name: string; target: string | null };
  incidentId: number | null;
  openedAt: string | null;
  resolvedAt: string | null;
  duration: string | null;
  durationSeconds: number | null;
  cause: { message: string | null; errorCode: string | null } | null;
  cert: { notAfter: string; thresholdDays: number } | null;
  dependents: { count: number; names: string[] };
  link: string;
}

export function templateScope(
  message: OutgoingMessage,
  rendered: RenderedMessage,
  notifier: { name: string; type: NotifierType },
  opts: { now: number; publicUrl: string | null },
): TemplateScope {
  const alerts = message.items.map((item) => templateAlert(item, opts.now, opts.publicUrl));
  return {
    title: rendered.title,
    text: rendered.text,
    tone: rendered.tone,
    link: rendered.link ?? '',
    count: message.items.length,
    counts: { ...rendered.summary },
    alerts,
    alert: alerts[0] ?? null,
    notifier: { name: notifier.name, type: notifier.type },
    test: message.test,
    now: new Date(opts.now).toISOString(),
  };
}

function templateAlert(item: AlertItem, now: number, publicUrl: string | null): TemplateAlert {
  const lasted = durationOf(item, now);
  return {
    kind: item.kind,
    severity: item.severity,
    reminder: item.reminder,
    subject: { type: item.subject.type, id: item.subject.id, name: item.subject.name, target: item.subject.target },
    incidentId: item.incidentId,
    openedAt: iso(item.openedAt),
    resolvedAt: iso(item.resolvedAt),
    duration: lasted === null ? null : humanDuration(lasted),
    durationSeconds: lasted === null ? null : Math.round(lasted / 1000),
    cause: item.cause ? { message: item.cause.message, errorCode: item.cause.errorCode } : null,
    cert: item.cert ? { notAfter: iso(item.cert.notAfter)!, thresholdDays: item.cert.thresholdDays } : null,
    dependents: { count: item.dependents?.count ?? 0, names: [...(item.dependents?.names ?? [])] },
    link: itemLink(item, publicUrl) ?? '',
  };
}
