import type { IncomingMessage, ServerResponse } from 'node:http';
import { badRequest, HttpError, invalidField, notFound } from '../../../src/errors.ts';
import { resolvePrincipal } from '../../auth/principal.ts';
import { readBody } from '../../http/body.ts';
import { pageHeaders } from '../../http/page-headers.ts';
import type { Audience, PageRow } from '../live-state.ts';
import { esc } from '../render/escape.ts';
import { buttonForm, READER_CSP, readerPage } from '../render/reader-pages.ts';
import { subscribeHtml, subscribePath } from '../render/subscribe-html.ts';
import { audienceOf } from '../serve.ts';
import type { StatusState } from '../state.ts';
import { SignupLimits } from './limits.ts';
import { confirmSubscriber, removeSubscriber, signUp, subscriberOfToken } from './signup.ts';
import { readSignup } from './signup-input.ts';
import { SubscriberTokens } from './tokens.ts';

/** What a reader-facing path of a page does. */
export type ReaderAction = 'subscribe' | 'confirm' | 'unsubscribe';

/** The reader's paths of a page: `/status/{slug}/subscribe`, `…/subscribe/confirm`, `…/unsubscribe`. */
export function readerAction(slug: string, path: string): ReaderAction | undefined {
  if (path === subscribePath(slug)) return 'subscribe';
  if (path === `${subscribePath(slug)}/confirm`) return 'confirm';
  if (path === `/status/${slug}/unsubscribe`) return 'unsubscribe';
  return undefined;
}

const wantsJson = (req: IncomingMessage) =>
  (req.headers['content-type'] ?? '').includes('json') || /application\/json/.test(req.headers.accept ?? '');

/**
 * The reader's side of subscriptions (docs/API.md#subscriptions): the form,
 * the sign-up, and the links of the mails. GET never changes anything (mail
 * scanners fetch links): it shows a page whose button POSTs. The POST to the
 * unsubscribe link is also RFC 8058's one-click (`List-Unsubscribe=One-Click`):
 * no cookie, no CSRF token, the link's HMAC is the authority.
 */
export class ReaderRoutes {
  readonly #state: StatusState;
  readonly #tokens: SubscriberTokens;
  readonly limits = new SignupLimits();

  constructor(state: StatusState) {
    this.#state = state;
    this.#tokens = new SubscriberTokens(state.ctx.installSecret);
  }

  /** Serves one action; errors become an HTML page for browsers and problem+json for JSON clients. */
  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    page: PageRow | undefined,
    action: ReaderAction,
    anonymous = false,
  ): Promise<void> {
    try {
      if (!page) throw notFound('No such status page');
      const get = req.method === 'GET' || req.method === 'HEAD';
      if (action === 'subscribe') {
        if (get) return await this.#form(req, res, page, anonymous);
        return await this.#subscribe(req, res, page, anonymous);
      }
      return await this.#link(req, res, page, action, get);
    } catch (err) {
      if (!(err instanceof HttpError) || wantsJson(req) || !page) throw err;
      req.resume();
      const fields = err.errors?.map((e) => `<li>${esc(e.field)}: ${esc(e.message)}</li>`).join('') ?? '';
      const body = `<p>${esc(err.message)}</p>${fields ? `<ul>${fields}</ul>` : ''}<p><a href="${subscribePath(page.slug)}">Back to the form</a></p>`;
      this.#html(res, err.status, readerPage(page.title, `/status/${page.slug}`, 'That did not work', body), err.headers);
    }
  }

  async #audience(req: IncomingMessage, anonymous: boolean): Promise<Audience> {
    if (anonymous) return 'anonymous';
    return audienceOf(await resolvePrincipal(req, this.#state.ctx.keys, this.#state.ctx.sessions));
  }

  #open(page: PageRow): void {
    if (page.subscriptions !== 1 || page.email_notifier_id === null) throw notFound(`Status page ${page.slug} takes no email sign-ups`);
  }

  async #form(req: IncomingMessage, res: ServerResponse, page: PageRow, anonymous: boolean): Promise<void> {
    this.#open(page);
    const view = await this.#state.view(page, await this.#audience(req, anonymous));
    this.#html(res, 200, readerPage(page.title, `/status/${page.slug}`, 'Subscribe', subscribeHtml(view.summary, true)));
  }

  async #subscribe(req: IncomingMessage, res: ServerResponse, page: PageRow, anonymous: boolean): Promise<void> {
    const { ctx } = this.#state;
    const now = ctx.clock.now();
    const client = this.limits.clientOf(req);
    // Before the body is read: a flood costs a bucket lookup, not a parse.
    this.limits.takeClient(client, now);
    this.#open(page);
    const input = await readSignup(req);
    // Picks are what this caller sees on the page: no probing for hidden ids.
    const view = await this.#state.view(page, await this.#audience(req, anonymous));
    const groups = new Set(view.summary.groups.map((g) => g.id));
    const resources = new Set(view.summary.groups.flatMap((g) => g.resources.map((r) => r.id)));
    const json = wantsJson(req);
    for (const id of input.groupIds)
      if (!groups.has(id)) throw invalidField(json ? 'groupIds' : 'group', `group ${id} is not on this page`);
    for (const id of input.resourceIds) {
      if (!resources.has(id)) throw invalidField(json ? 'resourceIds' : 'resource', `resource ${id} is not on this page`);
    }
    this.limits.takeAddress(page.id, input.key, now);
    const enqueued = await signUp(ctx.db, { pageId: page.id, ...input, client }, now);
    if (enqueued) ctx.bus.emit('status.subscribers.enqueued');
    // The same answer whatever the address's state: it tells nobody whether the address is subscribed.
    const text = 'If that address can receive mail, a confirmation link is on its way. Nothing else is sent until it is clicked.';
    if (json) {
      res
        .writeHead(202, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' })
        .end(JSON.stringify({ status: 'pending', detail: text }));
      return;
    }
    this.#html(res, 202, readerPage(page.title, `/status/${page.slug}`, 'Check your inbox', `<p>${text}</p>`));
  }

  async #link(req: IncomingMessage, res: ServerResponse, page: PageRow, action: 'confirm' | 'unsubscribe', get: boolean): Promise<void> {
    const { ctx } = this.#state;
    const token = new URL(req.url ?? '/', 'http://x').searchParams.get('token');
    if (!token) throw badRequest('The link has no token', [{ field: 'token', message: 'is required' }]);
    if (this.#tokens.idOf(token) === undefined) throw invalidField('token', 'is not a link of this page');
    // RFC 8058's body (`List-Unsubscribe=One-Click`) or the button's: read and dropped, bounded.
    if (!get) await readBody(req, 16 * 1024);
    const purpose = action === 'confirm' ? 'confirm' : 'unsubscribe';
    const row = await subscriberOfToken(ctx.db, this.#tokens, purpose, page.id, token);
    const home = `/status/${page.slug}`;
    const self = `${action === 'confirm' ? `${subscribePath(page.slug)}/confirm` : `${home}/unsubscribe`}?token=${encodeURIComponent(token)}`;
    if (action === 'confirm') {
      if (!row)
        throw new HttpError(404, 'not-found', 'This confirmation link is not valid (any more): sign up again on the page', {
          errors: [{ field: 'token', message: 'is not valid' }],
        });
      if (get)
        return this.#html(
          res,
          200,
          readerPage(
            page.title,
            home,
            'Confirm your subscription',
            `<p>Press the button to start getting ${esc(page.title)} status updates.</p>${buttonForm(self, 'Confirm subscription')}`,
          ),
        );
      await confirmSubscriber(ctx.db, row.id, ctx.clock.now());
      return this.#answer(
        req,
        res,
        page,
        'Subscribed',
        'You will get an email when an incident is posted or updated. Every mail has a link to unsubscribe.',
      );
    }
    if (get) {
      if (!row)
        return this.#html(res, 200, readerPage(page.title, home, 'Unsubscribed', '<p>This address gets no more mail from this page.</p>'));
      return this.#html(
        res,
        200,
        readerPage(
          page.title,
          home,
          'Unsubscribe',
          `<p>Press the button to stop ${esc(page.title)} status updates.</p>${buttonForm(self, 'Unsubscribe', { 'List-Unsubscribe': 'One-Click' })}`,
        ),
      );
    }
    // Done already (a second click, or the mail client's one-click before the reader's) is done.
    if (row) await removeSubscriber(ctx.db, row.id);
    return this.#answer(req, res, page, 'Unsubscribed', 'This address gets no more mail from this page.');
  }

  #answer(req: IncomingMessage, res: ServerResponse, page: PageRow, heading: string, text: string): void {
    if (wantsJson(req)) {
      res
        .writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' })
        .end(JSON.stringify({ status: heading.toLowerCase(), detail: text }));
      return;
    }
    this.#html(res, 200, readerPage(page.title, `/status/${page.slug}`, heading, `<p>${text}</p>`));
  }

  #html(res: ServerResponse, status: number, html: string, extra: Record<string, string> = {}): void {
    // The links carry tokens: no Referer leaves with them.
    res.writeHead(status, {
      ...pageHeaders(READER_CSP),
      'Referrer-Policy': 'no-referrer',
      'Content-Length': String(Buffer.byteLength(html)),
      ...extra,
    });
    res.end(html);
  }
}
