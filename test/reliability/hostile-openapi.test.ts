import fc from 'fast-check';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { send, type WireResponse } from '../helpers/http.ts';

/**
 * Issue 8, hostile input: requests generated from the OpenAPI document the
 * daemon serves, with the ADMIN key so that they reach validation and the
 * handlers. Every answer is < 500, every 4xx is problem+json with a matching
 * `status`, nothing hangs, and the daemon is healthy and logged no error after.
 *
 * MONCTL_HOSTILE_RUNS sets the total number of generated requests (default 10,000).
 */
const TOTAL = Number(process.env.MONCTL_HOSTILE_RUNS ?? 10_000);
const CONCURRENCY = 4;
const REQUEST_TIMEOUT_MS = 10_000;

type Schema = Record<string, any>;
interface Param {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: Schema;
}
interface Op {
  method: string;
  path: string;
  params: Param[];
  body?: Schema;
  stream: boolean;
}
interface Case {
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  note: string;
}

/** Percent-encodes every byte outside the unreserved set (lone surrogates become U+FFFD). */
const enc = (s: string) =>
  [...Buffer.from(s, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');

// ---- hostile building blocks ------------------------------------------------

const RAW_IDS = [
  '1e400',
  '99999999999999999999',
  '-0',
  '0x10',
  '%00',
  '..%2F',
  '..%2F..%2Fetc%2Fpasswd',
  '1.5',
  '%201',
  '+1',
  '-1',
  '9007199254740993',
  '-9007199254740993',
  'NaN',
  'Infinity',
  '%E0%A4%A',
  '%',
  '%%',
  '%FF',
  '%C0%AF',
  'null',
  'true',
  '[]',
  '%7B%7D',
  '0',
  '00',
  '1%00',
  '%D8%00',
  '%E2%80%AE1',
  '0b1',
  '1_000',
  '%D9%A1',
  '%EF%BC%91',
];

/** Date-times that name no instant: Date.parse rolled the first two over to another day. */
const CALENDAR_INVALID = [
  '2036-02-30T00:00:00Z',
  '2036-01-01T24:00:00Z',
  '2037-02-29T12:00:00+01:00',
  '2036-04-31T00:00:00',
  '2036-06-30T23:59:60Z',
  '2036-01-01T00:60:00Z',
  '2036-13-01T00:00:00Z',
  '2036-01-01T00:00:00+24:00',
];
/** Byte sequences that are not UTF-8: stray continuation, overlong, encoded surrogate, truncated, out of range. */
const INVALID_UTF8 = [[0xff], [0xfe], [0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80], [0xf0, 0x9f, 0x98]];
/** Lone surrogates as JSON escapes (JSON.parse keeps them; only a check after parsing sees them). */
const LONE_SURROGATES = ['\\ud800', '\\udfff', 'x\\ud83d', '\\ude00y', '\\uDBFF\\uDBFF'];

const hugeString = fc
  .tuple(fc.integer({ min: 1_000, max: 100_000 }), fc.constantFrom('x', 'é', '😀', '\u202E', '\u0000', '\\', '"'))
  .map(([n, c]) => c.repeat(Math.ceil(n / c.length)));
const weirdString = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\udfff',
    'x\ud83d',
    '\u202Eevil\u202C',
    '\u200F',
    '\uFEFF',
    '\u2028\u2029',
    '<script>alert(1)</script>',
    "' OR 1=1 --",
    '../../etc/passwd',
    '%00',
    '${jndi:ldap://127.0.0.1/a}',
    '__proto__',
    'constructor',
    '1e400',
    'NaN',
    '-0',
    '\r\nX-Injected: 1',
    'http://127.0.0.1:1/',
    '127.0.0.1:1',
    'HTTP',
    'ADMIN',
    'USER',
    '2030-02-30T00:00:00Z',
    '2030-01-01T24:00:00Z',
    '2030-12-31T23:59:60Z',
    '2031-02-29T00:00:00',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
);
const junk: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 2 ** 53),
    weirdString,
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(weirdString, fc.constantFrom('__proto__', 'constructor', 'prototype')), tie('v'), { maxKeys: 4 }),
  ),
})).v;
/** Arrays or objects nested thousands deep, as raw JSON text. */
const deepJson = fc
  .tuple(fc.integer({ min: 50, max: 5_000 }), fc.boolean())
  .map(([n, arr]) => (arr ? `${'['.repeat(n)}${']'.repeat(n)}` : `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`));

/** A marker for raw JSON text spliced into a generated value. */
class RawText {
  constructor(text: string) {
    this.text = text;
  }
  text: string;
}
const toJson = (v: unknown): string => {
  if (v instanceof RawText) return v.text;
  if (Array.isArray(v)) return `[${v.map(toJson).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
};

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: junk, weight: 4 },
  { arbitrary: weirdString, weight: 3 },
  { arbitrary: hugeString, weight: 1 },
  { arbitrary: deepJson.map((t) => new RawText(t)), weight: 1 },
  { arbitrary: fc.constantFrom('1e400', '-0', '99999999999999999999', '1.0', '0x10').map((t) => new RawText(t)), weight: 1 },
);

// ---- schema-driven values ----------------------------------------------------

function validFor(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s: Schema) => validFor(s, depth)));
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  if (schema.const !== undefined) return fc.constant(schema.const);
  switch (schema.type) {
    case 'string': {
      if (schema.format === 'date-time' || schema.format === 'date-time-input')
        return fc.constantFrom('2036-01-01T00:00:00', '2036-01-01T00:00:00Z', '2036-01-01T00:00:00+02:00', ...CALENDAR_INVALID);
      const min = schema.minLength ?? 0;
      const max = Math.min(schema.maxLength ?? 40, Math.max(min, 40));
      if (schema.pattern) {
        try {
          return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= min && s.length <= (schema.maxLength ?? Infinity));
        } catch {
          return fc.stringMatching(/^[a-z0-9.-]{1,20}$/);
        }
      }
      // Targets and hosts stay on loopback (no probe runs anyway: the scheduler is off).
      return fc.oneof(
        fc.string({ minLength: min, maxLength: max }),
        fc.constantFrom('http://127.0.0.1:1/', '127.0.0.1:1', '127.0.0.1', '/x'),
      );
    }
    case 'integer':
    case 'number': {
      const min = Math.max(schema.minimum ?? -1e6, -1e6);
      const max = Math.min(schema.maximum ?? 1e6, 1e6);
      // Mostly small values (ids that exist), sometimes anywhere in range.
      const lo = Math.min(Math.max(min, 0), max);
      return fc.oneof(fc.integer({ min: lo, max: Math.min(max, lo + 30) }), fc.integer({ min, max }));
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return depth > 3
        ? fc.constant([])
        : fc.array(validFor(schema.items ?? {}, depth + 1), { maxLength: Math.min(schema.maxItems ?? 5, 5) });
    case 'object': {
      if (depth > 3) return fc.constant({});
      const props = schema.properties ?? {};
      const required = new Set<string>(schema.required ?? []);
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, s] of Object.entries(props)) model[k] = validFor(s as Schema, depth + 1);
      return fc.record(model, { requiredKeys: [...required].filter((k) => k in model) });
    }
    default:
      return junk;
  }
}

/** A value for a schema: usually plausible, often hostile. */
const valueFor = (schema: Schema): fc.Arbitrary<unknown> =>
  fc.oneof({ arbitrary: validFor(schema), weight: 2 }, { arbitrary: hostileValue, weight: 2 });

function bodyFor(schema: Schema): fc.Arbitrary<{ text: string | Buffer; note: string }> {
  const props = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
  const required: string[] = schema.required ?? [];
  const valid = validFor(schema) as fc.Arbitrary<Record<string, unknown>>;
  const variants: Array<fc.Arbitrary<{ value: unknown; note: string }>> = [
    valid.map((value) => ({ value, note: 'valid-looking' })),
    // One body field wrong: type, huge, unicode, nested junk.
    ...(props.length
      ? [
          fc
            .tuple(valid, fc.constantFrom(...props.map(([k]) => k)), hostileValue)
            .map(([v, k, x]) => ({ value: { ...v, [k]: x }, note: `hostile field ${k}` })),
        ]
      : []),
    // Every field drawn independently (some plausible, some hostile).
    fc
      .record(Object.fromEntries(props.map(([k, s]) => [k, valueFor(s)])), { requiredKeys: [] })
      .map((value) => ({ value, note: 'mixed fields' })),
    ...(required.length
      ? [
          fc.tuple(valid, fc.constantFrom(...required)).map(([v, k]) => {
            const copy = { ...v };
            delete copy[k];
            return { value: copy, note: `missing ${k}` };
          }),
        ]
      : []),
    fc
      .tuple(valid, fc.dictionary(weirdString, hostileValue, { minKeys: 1, maxKeys: 3 }))
      .map(([v, extra]) => ({ value: { ...extra, ...v }, note: 'extra fields' })),
    hostileValue.map((value) => ({ value, note: 'hostile top level' })),
  ];
  const raw = fc
    .constantFrom<[string | Buffer, string]>(
      ['', 'empty'],
      ['{', 'truncated'],
      ['{"a":1,}', 'trailing comma'],
      ['\uFEFF{}', 'BOM'],
      [Buffer.from([0xff, 0xfe, 0x7b, 0x7d]), 'invalid UTF-8'],
      ['{"name":"\\ud800"}', 'lone surrogate escape'],
      ['{"__proto__":{"admin":true}}', 'proto'],
      ['NaN', 'NaN'],
      ['{"a":1}{"b":2}', 'two values'],
      [Buffer.from('{"name":"a\u0000"}'), 'raw NUL'],
      ['{"\\ud800":1}', 'lone surrogate key'],
      ...INVALID_UTF8.map((seq): [Buffer, string] => [
        Buffer.concat([Buffer.from('{"name":"a'), Buffer.from(seq), Buffer.from('"}')]),
        `invalid UTF-8 ${seq}`,
      ]),
    )
    .map(([text, note]) => ({ text, note: `raw ${note}` }));
  return fc.oneof(
    { arbitrary: fc.oneof(...variants).map(({ value, note }) => ({ text: toJson(value), note })), weight: 9 },
    { arbitrary: raw, weight: 1 },
  );
}

/** A path parameter: real small ids, hostile spellings, overflow, arbitrary text. */
const pathValue = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 40 }).map(String), weight: 3 },
  { arbitrary: fc.constantFrom(...RAW_IDS), weight: 4 },
  { arbitrary: fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String), weight: 1 },
  { arbitrary: weirdString.map(enc), weight: 2 },
  { arbitrary: fc.integer({ min: 200, max: 50_000 }).map((n) => enc('9'.repeat(n))), weight: 1 },
);
const queryValue = (schema: Schema) =>
  fc.oneof(
    { arbitrary: validFor(schema).map((v) => enc(String(v))), weight: 2 },
    { arbitrary: fc.constantFrom(...RAW_IDS), weight: 2 },
    { arbitrary: weirdString.map(enc), weight: 1 },
    { arbitrary: hugeString.map((s) => enc(s.slice(0, 20_000))), weight: 1 },
  );

function caseFor(op: Op): fc.Arbitrary<Case> {
  const pathParams = op.params.filter((p) => p.in === 'path');
  const queryParams = op.params.filter((p) => p.in === 'query');
  const path = fc.tuple(...pathParams.map(() => pathValue)).map((values) => {
    let p = op.path;
    pathParams.forEach((param, i) => (p = p.replace(`{${param.name}}`, values[i])));
    return p;
  });
  const query = fc
    .tuple(
      fc.tuple(...queryParams.map((p) => fc.option(queryValue(p.schema), { nil: undefined }))),
      fc.array(fc.tuple(weirdString.map(enc), weirdString.map(enc)), { maxLength: 2 }),
      fc.boolean(),
    )
    .map(([values, extra, repeat]) => {
      const parts: string[] = [];
      queryParams.forEach((p, i) => {
        if (values[i] !== undefined) parts.push(`${p.name}=${values[i]}`);
        if (values[i] !== undefined && repeat) parts.push(`${p.name}=${values[i]}`);
      });
      for (const [k, v] of extra) parts.push(`${k}=${v}`);
      return parts.length ? `?${parts.join('&')}` : '';
    });
  const contentType = fc.constantFrom(
    'application/json',
    'application/json',
    'application/json',
    'application/json; charset=utf-8',
    'application/problem+json',
    'text/plain',
    'application/x-www-form-urlencoded',
    '',
  );
  const body = op.body
    ? fc.option(bodyFor(op.body), { freq: 12, nil: undefined })
    : fc.option(
        hostileValue.map((v) => ({ text: toJson(v), note: 'unexpected body' })),
        { freq: 2, nil: undefined },
      );
  return fc.tuple(path, query, body, contentType).map(([p, q, b, ct]) => {
    const headers: Record<string, string> = {};
    if (b !== undefined && ct !== '') headers['content-type'] = ct;
    return { path: p + q, headers, body: b === undefined ? undefined : Buffer.from(b.text), note: b?.note ?? 'no body' };
  });
}

/** Ids that must survive: the ADMIN user 1 and the bootstrap key 1. */
function locksOut(op: Op, path: string): boolean {
  if (!/^\/admin\/api\/(users|api-keys)\/\{id\}$/.test(op.path) || op.method === 'GET') return false;
  const raw = path.split('?')[0].split('/').pop()!;
  let text = raw;
  try {
    text = decodeURIComponent(raw);
  } catch {
    /* stays raw */
  }
  return Number(text.trim()) === 1 || Number.parseInt(text.trim(), 10) === 1 || /^\D*0*1\D*$/.test(text);
}

// ---- the wire ------------------------------------------------------------------

function sendTimed(base: string, method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<WireResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const all: Record<string, string | number> = { ...headers };
    if (body !== undefined) all['content-length'] = body.length;
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers: all, agent: false }, (res) => {
      // An SSE stream that opened: only its status counts.
      if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '', json: () => undefined });
        req.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
      });
    });
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`));
    }, REQUEST_TIMEOUT_MS);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(body);
  });
}

/** Throws with a readable message when the response breaks the contract. */
function checkResponse(method: string, c: Case, res: WireResponse): void {
  const where = `${method} ${c.path.slice(0, 300)} [${c.note}] body=${c.body?.toString('utf8').slice(0, 300)}`;
  if (res.status >= 500) throw new Error(`${res.status} for ${where}: ${res.text.slice(0, 500)}`);
  if (res.status >= 400) {
    const type = String(res.headers['content-type'] ?? '');
    if (!/^application\/problem\+json/.test(type)) throw new Error(`${res.status} without problem+json (${type}) for ${where}`);
    let problem: any;
    try {
      problem = JSON.parse(res.text);
    } catch {
      throw new Error(`${res.status} with a body that is not JSON for ${where}: ${res.text.slice(0, 200)}`);
    }
    if (typeof problem?.status !== 'number' || problem.status !== res.status) {
      throw new Error(`${res.status} with problem status ${problem?.status} for ${where}`);
    }
  }
}

describe('hostile input generated from the OpenAPI document', () => {
  let d: TestDaemon;
  let auth: Record<string, string>;
  let ops: Op[];

  beforeAll(async () => {
    // No scheduler: generated resources are never probed, so no traffic leaves loopback.
    d = await startDaemon({ env: { MONCTL_SCHEDULER: 'off', MONCTL_HTTP_TIMEOUT: '500', MONCTL_LOG_LEVEL: 'info' } });
    auth = { authorization: `Bearer ${d.adminKey}` };
    const doc = (await send(d.url, 'GET', '/v3/api-docs')).json();
    const resolve = (s: Schema): Schema => {
      if (s?.$ref)
        return resolve(
          s.$ref
            .split('/')
            .slice(1)
            .reduce((o: any, k: string) => o[k], doc),
        );
      return s;
    };
    ops = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
        const ok = op.responses?.['200']?.content ?? op.responses?.['201']?.content ?? {};
        const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: any) => ({ ...p, schema: resolve(p.schema ?? {}) }));
        const body = op.requestBody?.content?.['application/json']?.schema;
        ops.push({ method: method.toUpperCase(), path, params, body: body ? resolve(body) : undefined, stream: 'text/event-stream' in ok });
      }
    }
  });
  afterAll(async () => {
    await d?.stop();
  });

  it(`sends at least ${TOTAL} generated requests: no 5xx, no hang, problem+json on every 4xx`, async () => {
    expect(ops.length).toBeGreaterThan(20);
    expect(ops.filter((op) => op.stream).length).toBeGreaterThan(0);
    const perOp = Math.ceil(TOTAL / ops.length);
    const statuses = new Map<number, number>();
    let sent = 0;
    let skipped = 0; // cases redirected away from id 1
    const started = Date.now();

    const runOp = async (op: Op) => {
      let arb = caseFor(op);
      // The on-demand check is the one operation that probes: only ids that name nothing.
      if (op.path === '/api/resources/{id}/check') {
        arb = arb.map((c) =>
          /^\/api\/resources\/([1-9]\d{0,8})\/check/.test(c.path)
            ? { ...c, path: c.path.replace(/^\/api\/resources\/\d+/, '/api/resources/123456789012') }
            : c,
        );
      }
      await fc.assert(
        fc.asyncProperty(arb, async (c) => {
          // Never delete (or demote) the ADMIN user 1 or the bootstrap key 1: aim at an id that names nothing instead.
          if (locksOut(op, c.path)) {
            skipped++;
            c = { ...c, path: op.path.replace('{id}', '123456789012') };
          }
          const res = await sendTimed(d.url, op.method, c.path, { ...auth, ...c.headers }, c.body);
          sent++;
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          checkResponse(op.method, c, res);
        }),
        { numRuns: perOp, endOnFailure: true, seed: process.env.MONCTL_HOSTILE_SEED ? Number(process.env.MONCTL_HOSTILE_SEED) : undefined },
      );
    };

    const queue = [...ops];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let op = queue.shift(); op; op = queue.shift()) await runOp(op);
      }),
    );

    const seconds = (Date.now() - started) / 1000;
    console.log(
      `hostile-openapi: ${sent} requests (${skipped} redirected from id 1) over ${ops.length} operations ` +
        `(${ops.filter((op) => op.stream).length} SSE streams, status only) in ${seconds.toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`,
    );
    expect(sent).toBeGreaterThanOrEqual(TOTAL);

    const health = await sendTimed(d.url, 'GET', '/actuator/health', {});
    expect(health.status).toBe(200);
    expect(health.json().status).toBe('UP');
    const errors = d.logs.filter((l) => l.level === 50 || (typeof l.level === 'number' && l.level >= 50));
    expect(errors, JSON.stringify(errors.slice(0, 3))).toEqual([]);
    expect(d.proc.exitCode).toBeNull();
  }, 300_000);

  /**
   * Issue 14, finding 7: input that used to be changed silently. For every
   * field of every JSON body: invalid UTF-8 bytes in it, a lone surrogate
   * escape as its value (and inside an array), and, for date-time fields, a
   * date-time that names no instant. Each is a 400 naming the field (`body`
   * and the byte offset for invalid UTF-8, which has no field before decoding).
   */
  it('invalid UTF-8, lone surrogates and calendar-invalid dates in every body field: 400 naming the field', async () => {
    const withBody = ops.filter((op) => op.body?.properties && Object.keys(op.body.properties).length);
    expect(withBody.length).toBeGreaterThan(10);
    const isDate = (s: Schema) => s.format === 'date-time-input' || (s.anyOf ?? []).some((m: Schema) => m.format === 'date-time-input');
    let sent = 0;
    let dateFields = 0;
    const expect400 = async (op: Op, path: string, body: Buffer, note: string) => {
      const c: Case = { path, headers: { 'content-type': 'application/json' }, body, note };
      const res = await sendTimed(d.url, op.method, path, { ...auth, ...c.headers }, body);
      sent++;
      checkResponse(op.method, c, res);
      expect(res.status, `${op.method} ${path} [${note}]: ${res.text}`).toBe(400);
      return res.json().errors as Array<{ field: string; message: string }>;
    };
    for (const op of withBody) {
      const path = op.path.replace(/\{\w+\}/g, '123456789012');
      const [valid] = fc.sample(validFor(op.body!) as fc.Arbitrary<Record<string, unknown>>, { numRuns: 1, seed: 14 });
      for (const [field, schema] of Object.entries(op.body!.properties as Record<string, Schema>)) {
        const MARK = '\u0001MARK\u0001';
        const text = toJson({ ...valid, [field]: `a${MARK}b` }).replace(JSON.stringify(MARK).slice(1, -1), MARK);
        const [before, after] = text.split(MARK);
        for (const seq of INVALID_UTF8) {
          const errors = await expect400(
            op,
            path,
            Buffer.concat([Buffer.from(before), Buffer.from(seq), Buffer.from(after)]),
            `invalid UTF-8 ${seq} in ${field}`,
          );
          expect(errors).toEqual([
            { field: 'body', message: `is not valid UTF-8: invalid byte sequence at byte ${Buffer.byteLength(before)}` },
          ]);
        }
        for (const lone of LONE_SURROGATES) {
          for (const [value, named] of [
            [`"${lone}"`, field],
            [`["ok","${lone}"]`, `${field}[1]`],
          ]) {
            const errors = await expect400(
              op,
              path,
              Buffer.from(toJson({ ...valid, [field]: new RawText(value) })),
              `lone surrogate in ${field}`,
            );
            expect(errors).toEqual([
              { field: named, message: expect.stringMatching(/^is not well-formed Unicode: lone surrogate U\+D[89A-F]/) },
            ]);
          }
        }
        if (!isDate(schema)) continue;
        dateFields++;
        for (const date of CALENDAR_INVALID) {
          const errors = await expect400(op, path, Buffer.from(toJson({ ...valid, [field]: date })), `calendar-invalid ${field}`);
          expect(errors, date).toContainEqual({ field, message: expect.stringMatching(/^must be a date-time/) });
        }
      }
    }
    console.log(
      `hostile-openapi: ${sent} requests with invalid UTF-8, lone surrogates and calendar-invalid dates over ${withBody.length} operations (${dateFields} date-time fields)`,
    );
    expect(dateFields).toBeGreaterThanOrEqual(2);
    const errors = d.logs.filter((l) => typeof l.level === 'number' && l.level >= 50);
    expect(errors, JSON.stringify(errors.slice(0, 3))).toEqual([]);
  }, 300_000);
});
