import { writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { makePki, type TestPki } from '../helpers/tls.ts';

export interface SeenRequest {
  method?: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * For the request-field tests of the CLI: a loopback HTTP target that records every request and
 * answers 200 `{"status":"UP"}`, and a throwaway PKI for client certificates; both started in
 * beforeAll and closed after the file.
 */
export function useRequestTarget(path = '/') {
  let server: Server | undefined;
  let pki: TestPki | undefined;
  let url = '';
  const seen: SeenRequest[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method, headers: req.headers, body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"UP"}');
      });
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
    pki = makePki();
  });
  afterAll(async () => {
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
    pki?.cleanup();
  });
  return {
    seen,
    get url() {
      return url;
    },
    get pki() {
      return pki!;
    },
  };
}

/** Writes `text` to `name` in `dir`; returns the path. */
export function writeIn(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}
