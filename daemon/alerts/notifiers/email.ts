import { createTransport } from 'nodemailer';
import type { OutgoingMessage, SendOutcome } from '../types.ts';
import type { LoadedNotifier } from './config-types.ts';
import type { RenderedMessage } from './render.ts';

/**
 * EMAIL: one SMTP session per attempt through nodemailer (STARTTLS required,
 * TLS from the first byte, or none), plain text and the same in HTML, with a Message-ID made from
 * the message id so that a retry is recognisable. Permanent SMTP rejections
 * (5xx but 503) and configuration errors are not retried; lost connections,
 * timeouts and 4xx replies are.
 */
const NOT_RETRYABLE_CODES = new Set(['EAUTH', 'ECONFIG', 'EENVELOPE', 'EMESSAGE', 'EMAXRECIPIENTS', 'EFILEACCESS', 'EURLACCESS']);

interface SmtpError extends Error {
  code?: string;
  responseCode?: number;
  permanent?: boolean;
  response?: string;
}

export function sendEmail(
  n: LoadedNotifier,
  message: OutgoingMessage,
  rendered: RenderedMessage,
  io: { timeoutMs: number; signal: AbortSignal },
): Promise<SendOutcome> {
  return sendSmtp(
    n,
    {
      to: n.config.to ?? [],
      subject: rendered.title,
      text: rendered.text,
      html: htmlPart(rendered.text),
      messageId: `<${message.id}@monctl>`,
      headers: { 'X-Monctl-Message-Id': message.id },
    },
    io,
  );
}

/** One mail as `sendSmtp` sends it (the notifier's `from` is added). */
export interface SmtpMail {
  to: string | string[];
  subject: string;
  text: string;
  html: string;
  /** `<…@…>`: the same on every attempt, so that a retry is recognisable. */
  messageId: string;
  headers: Record<string, string>;
}

/**
 * One mail through the SMTP settings of EMAIL notifier `n`, in one session: what sendEmail does
 * for alerts, and status page subscriptions do for their readers (the same server, the same
 * retry rules). Never throws.
 */
export async function sendSmtp(n: LoadedNotifier, mail: SmtpMail, io: { timeoutMs: number; signal: AbortSignal }): Promise<SendOutcome> {
  const c = n.config;
  const started = performance.now();
  const deadline = AbortSignal.any([io.signal, AbortSignal.timeout(io.timeoutMs)]);
  const transport = createTransport({
    host: c.host,
    port: c.port,
    secure: c.security === 'TLS',
    requireTLS: c.security === 'STARTTLS',
    ignoreTLS: c.security === 'NONE',
    auth: c.username ? { user: c.username, pass: n.secrets.password } : undefined,
    tls: { rejectUnauthorized: !c.skipTlsVerify, ...(c.tlsCa ? { ca: c.tlsCa } : {}) },
    connectionTimeout: io.timeoutMs,
    greetingTimeout: io.timeoutMs,
    socketTimeout: io.timeoutMs,
    socketCloseTimeout: 1000,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const latencyMs = () => Math.round(performance.now() - started);
  try {
    const info = await transport.sendMail({ from: c.from, ...mail, signal: deadline });
    return { ok: true, statusCode: replyCode(info.response), error: null, latencyMs: latencyMs(), retryable: false };
  } catch (caught) {
    const err = caught as SmtpError;
    const timedOut = deadline.aborted && !io.signal.aborted;
    const error = timedOut ? `timeout after ${io.timeoutMs} ms` : describeSmtpError(err);
    const retryable = timedOut || (err.responseCode !== undefined ? err.permanent !== true : !NOT_RETRYABLE_CODES.has(err.code ?? ''));
    return { ok: false, statusCode: err.responseCode ?? null, error, latencyMs: latencyMs(), retryable };
  } finally {
    transport.close();
  }
}

const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };

/**
 * The HTML alternative: the text as it is, in <pre>, so that mail clients keep its lines and
 * columns and a name in it can never be markup. A body template writes plain text for EMAIL (its
 * variables are not escaped), and this part is made from that text like the default one.
 */
export function htmlPart(text: string): string {
  const escaped = text.replace(/[&<>"]/g, (c) => HTML_ENTITIES[c]);
  return `<pre style="font-family: ui-monospace, Menlo, Consolas, monospace; white-space: pre-wrap">${escaped}</pre>`;
}

/** `250` of `250 2.0.0 OK queued`. */
function replyCode(response: string | undefined): number | null {
  const m = /^(\d{3})/.exec(response ?? '');
  return m ? Number(m[1]) : null;
}

function describeSmtpError(err: SmtpError): string {
  const text = (err.response ?? err.message ?? String(err)).replace(/\s+/g, ' ').trim();
  const base = err.code && !text.includes(err.code) ? `${err.code}: ${text}` : text;
  return base.length > 300 ? `${base.slice(0, 300)}…` : base;
}
