import { request as httpRequest } from 'node:http';
import { expect } from 'vitest';

/**
 * Raw HTTP for tests that look at the wire: no redirects followed, the path
 * sent exactly as given (even malformed percent-encoding), every header kept.
 */
export interface WireResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): any;
}

export interface WireOptions {
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body with Transfer-Encoding: chunked (no Content-Length). */
  chunked?: boolean;
}

export function send(base: string, method: string, path: string, opts: WireOptions = {}): Promise<WireResponse> {
  const url = new URL(base);
  const headers: Record<string, string | number> = { ...opts.headers };
  if (opts.body !== undefined && !opts.chunked) headers['content-length'] = Buffer.byteLength(opts.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
      });
    });
    req.on('error', reject);
    if (opts.chunked && opts.body !== undefined) {
      // Several writes, so the server cannot know the size up front.
      const body = Buffer.from(opts.body);
      for (let at = 0; at < body.length; at += 64 * 1024) req.write(body.subarray(at, at + 64 * 1024));
      req.end();
    } else req.end(opts.body);
  });
}

/** Headers for the bootstrap-style API key in `Authorization: Bearer`. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A request with a JSON body (when given) and the given credential headers, as the API's clients send. */
export function sendJson(
  base: string,
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<WireResponse> {
  return send(base, method, path, {
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** The same, failing the test on anything but 200: the parsed answer. */
export async function okJson(base: string, method: string, path: string, body: unknown, headers: Record<string, string>): Promise<any> {
  const res = await sendJson(base, method, path, body, headers);
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return res.json();
}

/** Asserts an RFC 9457 problem with this status; returns the parsed body. */
export function expectProblem(res: WireResponse, status: number, instance?: string): any {
  expect(res.status, res.text).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body).toMatchObject({
    status,
    type: expect.any(String),
    title: expect.any(String),
    detail: expect.any(String),
    instance: expect.any(String),
  });
  if (instance !== undefined) expect(body.instance).toBe(instance);
  return body;
}

/** The field names of a validation problem. */
export const fieldsOf = (problem: { errors?: Array<{ field: string }> }) => (problem.errors ?? []).map((e) => e.field);

/** A minimal cookie jar: remembers `name=value` from Set-Cookie, sends them back. */
export class CookieJar {
  readonly cookies = new Map<string, string>();

  store(res: WireResponse): void {
    const set = res.headers['set-cookie'] ?? [];
    for (const line of Array.isArray(set) ? set : [set]) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  }
}

/** The hidden `_csrf` value of the login form. */
export function csrfOf(html: string): string {
  const match = /<input[^>]*name="_csrf"[^>]*value="([^"]+)"/.exec(html);
  if (!match) throw new Error(`no _csrf field in:\n${html}`);
  return match[1];
}

/** A browser-like session: GET /login, POST the form; returns the jar and the CSRF token. */
export async function login(
  base: string,
  username: string,
  password: string,
): Promise<{ jar: CookieJar; csrf: string; res: WireResponse }> {
  const jar = new CookieJar();
  const page = await send(base, 'GET', '/login');
  jar.store(page);
  const csrf = csrfOf(page.text);
  const res = await send(base, 'POST', '/login', {
    headers: { ...jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username, password, _csrf: csrf }).toString(),
  });
  jar.store(res);
  return { jar, csrf, res };
}

/** Polls `probe` until it returns true (no timed assertion: the test's own timeout bounds it). */
export async function until(probe: () => Promise<boolean> | boolean, everyMs = 100): Promise<void> {
  while (!(await probe())) await new Promise((r) => setTimeout(r, everyMs));
}
