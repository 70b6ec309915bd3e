import { ApiClient, type ClientOptions, problemFrom, type RawResponse } from '../../src/client/api-client.ts';
import { VERSION } from '../../src/version.ts';
import { baseHeaders, send } from './transport.ts';

/**
 * The typed ApiClient with the CLI's light transport underneath: same calls,
 * same HttpError/MonctlError, without loading undici on every invocation.
 */
export class CliClient extends ApiClient {
  readonly #timeoutMs: number;

  constructor(opts: ClientOptions) {
    super({ userAgent: `monctl/${VERSION}`, ...opts });
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
  }

  override async raw(
    method: string,
    urlOrPath: string,
    body?: string | Buffer,
    extraHeaders: Record<string, string> = {},
  ): Promise<RawResponse> {
    const url = urlOrPath.startsWith('/') ? this.server + urlOrPath : urlOrPath;
    const headers: Record<string, string> = { ...baseHeaders(), ...this.authHeaders(method), ...extraHeaders };
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await send(method, url, headers, body, this.#timeoutMs);
    if (res.status >= 200 && res.status < 300) return res;
    throw problemFrom(res.status, res.headers['content-type'], res.text);
  }
}
