import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from '../../../src/errors.ts';
import { sendProblem } from '../../http/problem.ts';

/** An answer of the sign-in gate that is no refusal to forward (a redirect, the signed-out page), with the cookies it sets. */
export class SsoAnswer extends HttpError {
  readonly cookies: string[];
  readonly html: string | undefined;
  constructor(status: number, code: string, detail: string, opts: { location?: string; cookies?: string[]; html?: string } = {}) {
    super(status, code, `access: ${detail}`, { headers: opts.location ? { Location: opts.location } : {} });
    this.cookies = opts.cookies ?? [];
    this.html = opts.html;
  }
}

/**
 * The page of `/.monctl/sso/logout`. Not a redirect to the route: the provider's own session
 * would sign the browser in again at once, without a word.
 */
export const SIGNED_OUT_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Signed out</title></head>' +
  '<body><main><h1>Signed out</h1><p>Your session for this site has ended. <a href="/">Sign in again</a></p></main></body></html>';

export function sendSsoAnswer(req: IncomingMessage, res: ServerResponse, answer: SsoAnswer): void {
  if (answer.cookies.length) res.setHeader('Set-Cookie', answer.cookies);
  if (answer.html === undefined) return sendProblem(req, res, answer);
  res.writeHead(answer.status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': Buffer.byteLength(answer.html),
    'Cache-Control': 'no-store',
  });
  res.end(req.method === 'HEAD' ? undefined : answer.html);
}
