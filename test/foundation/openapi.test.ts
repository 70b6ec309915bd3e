import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationList } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { send } from '../helpers/http.ts';
import { openChromium } from '../helpers/browser.ts';

type Doc = {
  openapi: string;
  paths: Record<
    string,
    Record<string, { operationId?: string; security?: Array<Record<string, string[]>>; parameters?: Array<{ name: string; in: string }> }>
  >;
  components: { securitySchemes: Record<string, unknown> };
};
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every operation of the document as `METHOD path`, read at test time. */
function operationsOf(doc: Doc): Array<{ key: string; op: Doc['paths'][string][string]; path: string }> {
  const out = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item))
      if (METHODS.includes(method)) out.push({ key: `${method.toUpperCase()} ${path}`, op, path });
  }
  return out;
}

/** Every `$ref` in the document, for resolution checks. */
function refsOf(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refsOf(v, found));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') found.push(v);
      else refsOf(v, found);
    }
  }
  return found;
}

describe('OpenAPI document and explorer', () => {
  let d: TestDaemon;
  let doc: Doc;
  beforeAll(async () => {
    d = await startDaemon();
    const res = await send(d.url, 'GET', '/v3/api-docs');
    expect(res.status).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
    doc = res.json();
  });
  afterAll(async () => {
    await d?.stop();
  });

  it('validates as OpenAPI 3.1', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    const validator = new Validator({ strict: 'log', logger: false } as never);
    const result = await validator.validate(doc as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    // The validator can fail: a response without its required description does.
    const broken = structuredClone(doc) as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, Record<string, unknown>> }>>;
    };
    delete broken.paths['/actuator/health'].get.responses['200'].description;
    expect((await new Validator({ strict: 'log', logger: false } as never).validate(broken)).valid).toBe(false);
  });

  it('is public and describes every operation the daemon binds', async () => {
    const ours = operationsOf(doc)
      .map((o) => o.key)
      .sort();
    expect(ours).toEqual(operationList.map((op) => `${op.method} ${op.path}`).sort());
  });

  it('gives every operation a unique operationId and a security requirement from its schemes', () => {
    const ids = new Set<string>();
    for (const { key, op, path } of operationsOf(doc)) {
      expect(op.operationId, key).toMatch(/^[A-Za-z][A-Za-z0-9]*$/);
      expect(ids.has(op.operationId!), `duplicate ${op.operationId}`).toBe(false);
      ids.add(op.operationId!);
      expect(op.security?.length, key).toBeGreaterThan(0);
      const named = op.security!.filter((req) => Object.keys(req).length > 0);
      expect(named.length, `${key} names no scheme`).toBeGreaterThan(0);
      for (const req of named) for (const scheme of Object.keys(req)) expect(doc.components.securitySchemes, key).toHaveProperty(scheme);
      // Path templates and path parameters agree.
      const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      const declared = (op.parameters ?? [])
        .filter((p) => p.in === 'path')
        .map((p) => p.name)
        .sort();
      expect(declared, key).toEqual(templated);
    }
  });

  it('holds only schemas that compile as JSON Schema 2020-12 in Ajv strict mode', () => {
    // Ajv comes with the OpenAPI validator; strict mode refuses unknown keywords and loose types.
    const ajv = new Ajv2020({ strict: true, validateFormats: false, logger: false });
    ajv.addFormat('date-time-input', true);
    const components = (doc.components as unknown as { schemas: Record<string, object> }).schemas;
    for (const [name, schema] of Object.entries(components)) ajv.addSchema({ ...schema, $id: `https://monctl.invalid/${name}` });
    const failures: string[] = [];
    let count = 0;
    const walk = (node: unknown, where: string) => {
      if (!node || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node)) {
        if (key === 'schema' && value && typeof value === 'object') {
          count++;
          const local = JSON.parse(JSON.stringify(value).replace(/"#\/components\/schemas\/(\w+)"/g, '"https://monctl.invalid/$1"'));
          try {
            ajv.compile(local);
          } catch (err) {
            failures.push(`${where}: ${(err as Error).message}`);
          }
        } else walk(value, `${where}/${key}`);
      }
    };
    walk(doc.paths, '');
    expect(count).toBeGreaterThan(0);
    expect(failures).toEqual([]);
  });

  // TypeBox hashes a whole array for uniqueItems before it checks the items' types: a body with
  // thousands of nested [[[…]]] overflowed the stack (a 500). Handlers drop duplicates instead.
  it('uses no uniqueItems anywhere (its check recurses through hostile nested arrays)', () => {
    const found = JSON.stringify(doc).match(/"uniqueItems"/g) ?? [];
    expect(found).toEqual([]);
  });

  it('resolves every $ref inside the document', () => {
    for (const ref of refsOf(doc)) {
      expect(ref, ref).toMatch(/^#\//);
      let node: unknown = doc;
      for (const part of ref.slice(2).split('/'))
        node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
      expect(node, ref).toBeDefined();
    }
  });

  // Chromium on a busy 2-core machine: a generous budget (bounds only, no timing is asserted).
  it('shows every operation in Swagger UI at /api without leaving loopback', { timeout: 120_000 }, async () => {
    const expected = operationsOf(doc)
      .map((o) => o.key)
      .sort();
    const profile = mkdtempSync(join(tmpdir(), 'monctl-chromium-'));
    const browser = await openChromium(profile);
    try {
      const page = await browser.context.newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (err) => pageErrors.push(String(err)));
      await page.goto(`${d.url}/api`, { timeout: 90_000 });
      // Swagger UI renders asynchronously: wait for as many operation blocks as the document has.
      await page.waitForFunction(
        (n) =>
          (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll('.opblock')
            .length >= n,
        expected.length,
        { timeout: 90_000 },
      );
      const shown = await page.$$eval('.opblock', (blocks) =>
        blocks.map((b) => {
          const method = b.querySelector('.opblock-summary-method')?.textContent?.trim() ?? '';
          const path = b.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '';
          const locked = b.querySelector('.authorization__btn') !== null;
          return { key: `${method.toUpperCase()} ${path}`, locked };
        }),
      );
      expect(shown.map((s) => s.key).sort()).toEqual(expected);
      // Each operation shows its security requirement (the lock).
      expect(shown.filter((s) => !s.locked)).toEqual([]);
      expect(pageErrors).toEqual([]);
      expect(browser.requests.length).toBeGreaterThan(0);
      expect(browser.offLoopback).toEqual([]);
    } finally {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    }
  });
});
