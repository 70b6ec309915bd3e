import type { Dispatcher } from 'undici';
import { fillPath, type InputOf, type OperationDef, type ResponseOf } from '../api/operation.ts';
import { ExitCode, HttpError, MonctlError, type Problem } from '../errors.ts';
import { explainCertificateFailure } from '../tls/certificate-error.ts';

export type Credential = { kind: 'none' } | { kind: 'api-key'; token: string } | { kind: 'session'; cookie: string; csrf: string };

export interface ClientOptions {
  server: string;
  credential?: Credential;
  dispatcher?: Dispatcher;
  /** Per-request timeout in ms (headers and body). */
  timeoutMs?: number;
  userAgent?: string;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * The typed client of the monctl API: `client.call(operations.getResource,
 * { params: { id: 3 } })` returns the operation's response type. A problem
 * response is thrown as HttpError (with its field errors and an exit code),
 * an unreachable daemon as MonctlError `connection`.
 */
export class ApiClient {
  readonly server: string;
  readonly credential: Credential;
  readonly #dispatcher: Dispatcher | undefined;
  readonly #timeoutMs: number;
  readonly #userAgent: string;

  constructor(opts: ClientOptions) {
    this.server = opts.server.replace(/\/+$/, '');
    this.credential = opts.credential ?? { kind: 'none' };
    this.#dispatcher = opts.dispatcher;
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
    this.#userAgent = opts.userAgent ?? 'monctl-client';
  }

  /** Headers that carry this client's credential. */
  authHeaders(method = 'GET'): Record<string, string> {
    const c = this.credential;
    if (c.kind === 'api-key') return { authorization: `Bearer ${c.token}` };
    if (c.kind === 'session') {
      const headers: Record<string, string> = { cookie: c.cookie };
      if (method !== 'GET' && method !== 'HEAD') headers['x-csrf-token'] = c.csrf;
      return headers;
    }
    return {};
  }

  /** The full URL of an operation, with path parameters and query filled in. */
  url<O extends OperationDef>(op: O, input?: InputOf<O>): string {
    const { params, query } = (input ?? {}) as { params?: Record<string, unknown>; query?: Record<string, unknown> };
    let url = this.server + fillPath(op.path, params);
    const entries = Object.entries(query ?? {}).filter(([, v]) => v !== undefined && v !== null);
    if (entries.length) url += `?${new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)]))}`;
    return url;
  }

  // The input may be left out when all of its fields are optional (InputOf is an object type, never undefined).
  // biome-ignore lint/complexity/noBannedTypes: `{} extends X` asks whether X has only optional fields (then the input may be left out)
  async call<O extends OperationDef>(op: O, ...[input]: {} extends InputOf<O> ? [InputOf<O>?] : [InputOf<O>]): Promise<ResponseOf<O>> {
    const body = (input as { body?: unknown } | undefined)?.body;
    const res = await this.raw(op.method, this.url(op, input), body === undefined ? undefined : JSON.stringify(body));
    return (res.text === '' ? undefined : JSON.parse(res.text)) as ResponseOf<O>;
  }

  /** Any request; throws HttpError on a non-2xx answer. Paths are relative to the server. */
  async raw(method: string, urlOrPath: string, body?: string | Buffer, extraHeaders: Record<string, string> = {}): Promise<RawResponse> {
    const url = urlOrPath.startsWith('/') ? this.server + urlOrPath : urlOrPath;
    const headers: Record<string, string> = {
      'user-agent': this.#userAgent,
      accept: 'application/json',
      ...this.authHeaders(method),
      ...extraHeaders,
    };
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    // undici is loaded on first use: the CLI brings a lighter transport and must not pay for it.
    const { request } = await import('undici');
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method: method as Dispatcher.HttpMethod,
        headers,
        body,
        dispatcher: this.#dispatcher,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      });
    } catch (err) {
      const cause = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      const message = explainCertificateFailure(this.server, err) ?? `cannot reach ${this.server}: ${cause}`;
      throw new MonctlError('connection', message, ExitCode.error, { cause: err });
    }
    const text = await res.body.text();
    if (res.statusCode >= 200 && res.statusCode < 300) return { status: res.statusCode, headers: res.headers, text };
    throw problemFrom(res.statusCode, res.headers['content-type'], text);
  }
}

/** A non-2xx answer as HttpError: the problem document's detail and field errors when there is one. */
export function problemFrom(status: number, contentType: string | string[] | undefined, text: string): HttpError {
  const type = String(contentType ?? '');
  if (type.includes('json')) {
    try {
      const problem = JSON.parse(text) as Problem;
      if (problem && typeof problem.status === 'number') return HttpError.fromProblem(problem);
    } catch {
      // fall through: not a problem document
    }
  }
  return new HttpError(status, 'http-error', `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`);
}
