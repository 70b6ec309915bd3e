import { describe, expect, it } from 'vitest';
import {
  ConditionSyntaxError,
  evaluate,
  needsBody,
  type Observation,
  parse,
  placeholdersOf,
  validateConditions,
} from '../../src/probes/conditions/index.ts';

const HOUR = 3_600_000;
const obs = (o: Partial<Observation> = {}): Observation => ({ responseTimeMs: 0, connected: true, ...o });
const html =
  '<!DOCTYPE html><html lang="en"><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8" /></head><body><div id="user">jane.doe</div></body></html>';

/** [condition, what the check saw, verdict, message]: Gatus's documented semantics (its README and condition_test.go). */
const ROWS: [string, Partial<Observation>, boolean, string][] = [
  // [STATUS] and the operators.
  ['[STATUS] == 200', { status: 200 }, true, '[STATUS] (200) == 200'],
  ['[STATUS] == 200', { status: 500 }, false, '[STATUS] (500) == 200'],
  ['[STATUS] != 200', { status: 500 }, true, '[STATUS] (500) != 200'],
  ['[STATUS] < 300', { status: 201 }, true, '[STATUS] (201) < 300'],
  ['[STATUS] < 300', { status: 404 }, false, '[STATUS] (404) < 300'],
  ['[STATUS] <= 299', { status: 299 }, true, '[STATUS] (299) <= 299'],
  ['[STATUS] > 400', { status: 400 }, false, '[STATUS] (400) > 400'],
  ['[STATUS] >= 400', { status: 400 }, true, '[STATUS] (400) >= 400'],
  ['[STATUS] == 200', {}, false, '[STATUS] (0) == 200'],
  ['[status] == 200', { status: 200 }, true, '[status] (200) == 200'],
  // [RESPONSE_TIME], in ms, against numbers and durations.
  ['[RESPONSE_TIME] < 500', { responseTimeMs: 50.9 }, true, '[RESPONSE_TIME] (50) < 500'],
  ['[RESPONSE_TIME] <= 500', { responseTimeMs: 750 }, false, '[RESPONSE_TIME] (750) <= 500'],
  ['[RESPONSE_TIME] < 1s', { responseTimeMs: 50 }, true, '[RESPONSE_TIME] (50) < 1s'],
  ['[RESPONSE_TIME] > 1s', { responseTimeMs: 2000 }, true, '[RESPONSE_TIME] (2000) > 1s'],
  ['[RESPONSE_TIME] < 300ms', { responseTimeMs: 301 }, false, '[RESPONSE_TIME] (301) < 300ms'],
  ['[RESPONSE_TIME] < potato', { responseTimeMs: 50 }, false, '[RESPONSE_TIME] (50) < potato (0)'],
  ['[RESPONSE_TIME] < 1.5s', { responseTimeMs: 1499 }, true, '[RESPONSE_TIME] (1499) < 1.5s'],
  ['[RESPONSE_TIME] >= 1m30s', { responseTimeMs: 89_999 }, false, '[RESPONSE_TIME] (89999) >= 1m30s'],
  ['[RESPONSE_TIME] < 0x10', { responseTimeMs: 15 }, true, '[RESPONSE_TIME] (15) < 0x10 (16)'],
  // [CERTIFICATE_EXPIRATION], a duration; 0 without TLS.
  ['[CERTIFICATE_EXPIRATION] > 48h', { certificateExpiresInMs: 24 * HOUR }, false, '[CERTIFICATE_EXPIRATION] (24h) > 48h'],
  ['[CERTIFICATE_EXPIRATION] > 12h', { certificateExpiresInMs: 24 * HOUR }, true, '[CERTIFICATE_EXPIRATION] (24h) > 12h'],
  ['[CERTIFICATE_EXPIRATION] > 1h30m', { certificateExpiresInMs: 1.5 * HOUR + 1000 }, true, '[CERTIFICATE_EXPIRATION] (1h30m1s) > 1h30m'],
  [
    '[CERTIFICATE_EXPIRATION] > 2419200000',
    { certificateExpiresInMs: 14 * 24 * HOUR },
    false,
    '[CERTIFICATE_EXPIRATION] (336h) > 2419200000',
  ],
  ['[CERTIFICATE_EXPIRATION] > 0', { certificateExpiresInMs: -2 * HOUR }, false, '[CERTIFICATE_EXPIRATION] (-2h) > 0'],
  ['[CERTIFICATE_EXPIRATION] == 0', {}, true, '[CERTIFICATE_EXPIRATION] (0) == 0'],
  // [IP], [CONNECTED].
  ['[IP] == 127.0.0.1', { ip: '127.0.0.1' }, true, '[IP] (127.0.0.1) == 127.0.0.1'],
  ['[IP] == 127.0.0.1', { ip: '::1' }, false, '[IP] (::1) == 127.0.0.1'],
  ['[CONNECTED] == true', { connected: true }, true, '[CONNECTED] (true) == true'],
  ['[CONNECTED] == true', { connected: false }, false, '[CONNECTED] (false) == true'],
  // [BODY] whole, and numbers against strings.
  ['[BODY] == test', { body: 'test\n' }, true, '[BODY] (test) == test'],
  ['[BODY] == 123', { body: '123' }, true, '[BODY] (123) == 123'],
  ['[BODY] < 124', { body: '123' }, true, '[BODY] (123) < 124'],
  ['[BODY] > 123', { body: '100' }, false, '[BODY] (100) > 123'],
  ['1 == 2', {}, false, '1 == 2'],
  ['01 == 1', {}, true, '01 == 1'],
  ['1.0 == 1', {}, false, '1.0 == 1'],
  // JSON paths.
  ['[BODY].status == UP', { body: '{"status":"UP"}' }, true, '[BODY].status (UP) == UP'],
  ['[BODY].status == UP', { body: '{"status":"DOWN"}' }, false, '[BODY].status (DOWN) == UP'],
  ['[BODY].data.name == john', { body: '{"data": {"id": 1, "name": "john"}}' }, true, '[BODY].data.name (john) == john'],
  ['[BODY].data[1].id == 2', { body: '{"data": [{"id": 1}, {"id": 2}]}' }, true, '[BODY].data[1].id (2) == 2'],
  ['[BODY][0].id == 1', { body: '[{"id": 1}, {"id": 2}]' }, true, '[BODY][0].id (1) == 1'],
  ['[BODY].data.id > 5', { body: '{"data": {"id": 1}}' }, false, '[BODY].data.id (1) > 5'],
  ['[BODY].data == 1', { body: '{"data": "0x1"}' }, true, '[BODY].data (0x1) == 1'],
  ['[BODY].data == 2', { body: '{"data": "0b0010"}' }, true, '[BODY].data (0b0010) == 2'],
  ['[BODY].data > 0', { body: '{"data": "0o1"}' }, true, '[BODY].data (1) > 0'],
  ['[BODY].balance > 100', { body: '{"balance": "123.40000000000005"}' }, true, '[BODY].balance (123) > 100'],
  ['[BODY].ok == true', { body: '{"ok": true}' }, true, '[BODY].ok (true) == true'],
  ['[BODY].user == x', { body: '{"user": {"b": 1, "a": [1]}}' }, false, '[BODY].user ({"a":[1],"b":1}) == x'],
  ['[BODY].tags == x', { body: '{"tags": ["a", 2, null]}' }, false, '[BODY].tags ([a 2 <nil>]) == x'],
  ['[BODY].age == [BODY].id', { body: '{"age": 1, "id": 1}' }, true, '[BODY].age (1) == [BODY].id (1)'],
  [
    '[BODY].user.first == [BODY].user.last',
    { body: '{"user": {"first": "john", "last": "doe"}}' },
    false,
    '[BODY].user.first (john) == [BODY].user.last (doe)',
  ],
  // A missing path, null, a body that is not JSON, a truncated body: the condition fails and says why.
  ['[BODY].data.name == john', { body: '{"data": {"id": 1}}' }, false, '[BODY].data.name (INVALID: no such path in the body) == john'],
  ['[BODY].data.name != john', { body: '{"data": {"id": 1}}' }, false, '[BODY].data.name (INVALID: no such path in the body) != john'],
  ['[BODY].data == OK', { body: '{"data": null}' }, false, '[BODY].data (INVALID: no such path in the body) == OK'],
  ['[BODY][0].name == test', { body: '{"statusCode": 500}' }, false, '[BODY][0].name (INVALID: no such path in the body) == test'],
  ['[BODY].status == UP', { body: '<html>UP</html>' }, false, '[BODY].status (INVALID: the body is not JSON) == UP'],
  [
    '[BODY].status == UP',
    { body: '{"status":"UP"', bodyTruncated: true },
    false,
    '[BODY].status (INVALID: the body is over the size cap and was not read whole) == UP',
  ],
  [
    '[BODY] == pat(*UP*)',
    { body: 'UP', bodyTruncated: true },
    false,
    '[BODY] (INVALID: the body is over the size cap and was not read whole) == pat(*UP*)',
  ],
  // len(): arrays count items; strings, numbers, objects and whole bodies count bytes.
  ['len([BODY].data) == 3', { body: '{"data": [{"id": 1}, {"id": 2}, {"id": 3}]}' }, true, 'len([BODY].data) (3) == 3'],
  ['len([BODY].data) > 0', { body: '{"data": []}' }, false, 'len([BODY].data) (0) > 0'],
  ['len([BODY]) == 3', { body: '[{"id": 1}, {"id": 2}, {"id": 3}]' }, true, 'len([BODY]) (3) == 3'],
  ['len([BODY]) == 8', { body: 'john.doe' }, true, 'len([BODY]) (8) == 8'],
  ['len([BODY]) == 20', { body: '{"name": "john.doe"}' }, true, 'len([BODY]) (20) == 20'],
  ['len([BODY].name) == 8', { body: '{"name": "john.doe"}' }, true, 'len([BODY].name) (8) == 8'],
  ['len([BODY].name) == 2', { body: '{"name": "é"}' }, true, 'len([BODY].name) (2) == 2'],
  ['len([BODY].age) == 2', { body: '{"age": 18}' }, true, 'len([BODY].age) (2) == 2'],
  ['len([BODY].adult) == 4', { body: '{"adult": true}' }, true, 'len([BODY].adult) (4) == 4'],
  ['len([BODY][0]) == 23', { body: '[{"age":18,"adult":true}]' }, true, 'len([BODY][0]) (23) == 23'],
  ['len([BODY].data) == 8', { body: '{"name": "john.doe"}' }, false, 'len([BODY].data) (INVALID: no such path in the body) == 8'],
  ['len([BODY].data) < 5', { body: '{"data":[{"id":1}]}' }, true, 'len([BODY].data) (1) < 5'],
  // has().
  ['has([BODY].errors) == false', { body: '{}' }, true, 'has([BODY].errors) (false) == false'],
  ['has([BODY].errors) == false', { body: '{"errors": ["1"]}' }, false, 'has([BODY].errors) (true) == false'],
  ['has([BODY].users) == true', { body: '{"users": []}' }, true, 'has([BODY].users) (true) == true'],
  ['has([BODY].users) == true', { body: '{}' }, false, 'has([BODY].users) (false) == true'],
  ['has([BODY].errors) == false', { body: 'not json' }, false, 'has([BODY].errors) (INVALID: the body is not JSON) == false'],
  ['has([BODY]) == true', { body: '  ' }, false, 'has([BODY]) (false) == true'],
  // pat(): a glob, either side; the value shown is cut at 25 characters.
  ['[BODY] == pat(*john*)', { body: '{"name": "john.doe"}' }, true, '[BODY] ({"name": "john.doe"}) == pat(*john*)'],
  ['[BODY].name == pat(john*)', { body: '{"name": "john.doe"}' }, true, '[BODY].name (john.doe) == pat(john*)'],
  ['[BODY].name == pat(bob*)', { body: '{"name": "john.doe"}' }, false, '[BODY].name (john.doe) == pat(bob*)'],
  [
    '[BODY] == pat(*<div id="user">john.doe</div>*)',
    { body: html },
    false,
    '[BODY] (<!DOCTYPE html><html lang...(truncated)) == pat(*<div id="user">john.doe</div>*)',
  ],
  [
    'pat(*<div id="user">john.doe</div>*) == [BODY]',
    { body: html },
    false,
    'pat(*<div id="user">john.doe</div>*) == [BODY] (<!DOCTYPE html><html lang...(truncated))',
  ],
  [
    '[BODY].data == pat(*Whatever*)',
    { body: '{"data": ["hello", "world", "Whatever"]}' },
    true,
    '[BODY].data ([hello world Whatever]) == pat(*Whatever*)',
  ],
  ['[IP] == pat(10.*)', { ip: '10.0.0.0' }, true, '[IP] (10.0.0.0) == pat(10.*)'],
  ['[IP] == pat(10.*)', { ip: '255.255.255.255' }, false, '[IP] (255.255.255.255) == pat(10.*)'],
  ['[STATUS] == pat(4?4)', { status: 404 }, true, '[STATUS] (404) == pat(4?4)'],
  ['[STATUS] != pat(5*)', { status: 200 }, true, '[STATUS] (200) != pat(5*)'],
  ['[BODY] == pat(a[0-9]c)', { body: 'a5c' }, true, '[BODY] (a5c) == pat(a[0-9]c)'],
  ['[BODY] == pat(a[^0-9]c)', { body: 'a5c' }, false, '[BODY] (a5c) == pat(a[^0-9]c)'],
  ['[BODY] == pat(*/health*)', { body: 'GET /health ok' }, true, '[BODY] (GET /health ok) == pat(*/health*)'],
  ['[BODY] == pat(\\*)', { body: '*' }, true, '[BODY] (*) == pat(\\*)'],
  // any(): a list of values, either side; exact text.
  ['[STATUS] == any(200, 429)', { status: 429 }, true, '[STATUS] (429) == any(200, 429)'],
  ['[STATUS] == any(200, 429)', { status: 404 }, false, '[STATUS] (404) == any(200, 429)'],
  ['any(200, 429) == [STATUS]', { status: 200 }, true, 'any(200, 429) == [STATUS] (200)'],
  ['[BODY].name == any(john.doe, jane.doe)', { body: '{"name": "bob"}' }, false, '[BODY].name (bob) == any(john.doe, jane.doe)'],
  ['[BODY].name != any(john.doe, jane.doe)', { body: '{"name": "bob"}' }, true, '[BODY].name (bob) != any(john.doe, jane.doe)'],
  ['[BODY].id == any(1, 2)', { body: '{"id": 2}' }, true, '[BODY].id (2) == any(1, 2)'],
  ['[BODY].id == any(1, 2)', { body: '{"id": 3}' }, false, '[BODY].id (3) == any(1, 2)'],
  ['[BODY].ip == any(127.0.0.1, ::1)', { body: '{"ip": "::1"}' }, true, '[BODY].ip (::1) == any(127.0.0.1, ::1)'],
  // Added to Gatus: [HEADER].Name (any case) and regex().
  [
    '[HEADER].Content-Type == pat(*json*)',
    { headers: { 'content-type': 'application/json' } },
    true,
    '[HEADER].Content-Type (application/json) == pat(*json*)',
  ],
  ['[HEADER].X-Version >= 3', { headers: { 'x-version': '2' } }, false, '[HEADER].X-Version (2) >= 3'],
  [
    '[HEADER].Set-Cookie == pat(*b=2*)',
    { headers: { 'set-cookie': ['a=1', 'b=2'] } },
    true,
    '[HEADER].Set-Cookie (a=1, b=2) == pat(*b=2*)',
  ],
  ['[HEADER].X-Missing == 1', { headers: {} }, false, '[HEADER].X-Missing (INVALID: no such header) == 1'],
  ['has([HEADER].X-Missing) == false', { headers: {} }, true, 'has([HEADER].X-Missing) (false) == false'],
  ['len([HEADER].ETag) == 4', { headers: { etag: '"ab"' } }, true, 'len([HEADER].ETag) (4) == 4'],
  [
    '[BODY] == regex(^\\{"status":"(UP|OK)"\\}$)',
    { body: '{"status":"OK"}' },
    true,
    '[BODY] ({"status":"OK"}) == regex(^\\{"status":"(UP|OK)"\\}$)',
  ],
  ['[BODY].version != regex(^1\\.)', { body: '{"version":"2.4.1"}' }, true, '[BODY].version (2.4.1) != regex(^1\\.)'],
  [
    '[HEADER].Server == regex(nginx/1\\.2\\d)',
    { headers: { server: 'nginx/1.18' } },
    false,
    '[HEADER].Server (nginx/1.18) == regex(nginx/1\\.2\\d)',
  ],
];

describe('conditions: the table, from Gatus semantics', () => {
  it.each(ROWS)('%s', (text, seen, ok, message) => {
    expect(evaluate(parse(text), obs(seen))).toEqual({ ok, message });
  });

  it('reads a body as JSON once per check, however many conditions use it', () => {
    const spy = JSON.parse;
    let calls = 0;
    JSON.parse = (...args: Parameters<typeof JSON.parse>) => {
      calls++;
      return spy(...args);
    };
    try {
      const seen = obs({ body: '{"a": 1, "b": [1, 2]}' });
      for (const text of ['[BODY].a == 1', 'len([BODY].b) == 2', 'has([BODY].c) == false'])
        expect(evaluate(parse(text), seen).ok).toBe(true);
      expect(calls).toBe(1);
    } finally {
      JSON.parse = spy;
    }
  });

  it("never answers one check with another check's body", () => {
    const status = parse('[BODY].status == UP');
    const up = obs({ body: '{"status":"UP"}' });
    const down = obs({ body: '{"status":"DOWN"}' });
    expect([evaluate(status, up).ok, evaluate(status, down).ok, evaluate(status, up).ok]).toEqual([true, false, true]);
    up.body = '{"status":"DOWN"}';
    expect(evaluate(status, up)).toEqual({ ok: false, message: '[BODY].status (DOWN) == UP' });
  });

  it('a catastrophic regex() on a large body ends (the linear engine takes over)', () => {
    const result = evaluate(parse('[BODY] == regex((a+)+$)'), obs({ body: `${'a'.repeat(100_000)}!` }));
    expect(result.ok).toBe(false);
  });
});

/** [condition, column, message part]. */
const SYNTAX: [string, number, string][] = [
  ['', 1, 'empty condition'],
  ['[STATUS]', 1, 'expected a comparison'],
  ['[STATUS]==200', 9, 'space on each side of =='],
  ['[STATUS] == ', 10, 'nothing after =='],
  [' == 200', 1, 'nothing before =='],
  ['[STATUS] == 200 == 300', 17, 'a second =='],
  ['[FOO] == 1', 1, 'unknown placeholder [FOO]'],
  ['x == [DOMAIN_EXPIRATION]', 6, 'monctl does not support'],
  ['[STATUS].x == 1', 9, 'unexpected text after [STATUS]'],
  ['[BODY]x == 1', 7, 'expected . or ['],
  ['[BODY].a..b == 1', 10, 'empty key'],
  ['[BODY].a[x] == 1', 9, 'array index'],
  ['[HEADER] == 1', 9, '[HEADER] takes a header name'],
  ['[HEADER].Bad Name == 1', 9, '[HEADER] takes a header name'],
  ['len(x) == 1', 5, 'len() takes a placeholder'],
  ['has([BODY].a == 1', 13, 'has( has no closing )'],
  ['[BODY] < pat(x*)', 10, 'pat() works only with == and !='],
  ['any(1, 2) >= [STATUS]', 1, 'any() works only with == and !='],
  ['pat(a*) == any(a, b)', 12, 'any() compares with a value'],
  ['[BODY] == pat(a[z-a])', 16, 'reversed'],
  ['[BODY] == pat(abc\\)', 18, 'lone \\'],
  ['[BODY] == regex(()', 17, 'regex(): Invalid regular expression'],
  ['[BODY] == regex((a)\\1)', 20, 'backreferences or lookarounds'],
  [`[BODY] == ${'x'.repeat(1100)}`, 1025, 'at most 1024 characters'],
];

describe('conditions: syntax errors name the column', () => {
  it.each(SYNTAX)('%s', (text, column, message) => {
    let error: unknown;
    try {
      parse(text);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConditionSyntaxError);
    expect((error as ConditionSyntaxError).message).toContain(message);
    expect((error as ConditionSyntaxError).column).toBe(column);
  });
});

describe('conditions: placeholders per resource type', () => {
  it('lists the placeholders a condition reads, and whether the body must be read', () => {
    expect(placeholdersOf(parse('len([BODY].a) > [HEADER].X-Max'))).toEqual(['BODY', 'HEADER']);
    expect(placeholdersOf(parse('[BODY].a == [BODY].b'))).toEqual(['BODY']);
    expect(needsBody([parse('[STATUS] == 200'), parse('[RESPONSE_TIME] < 300')])).toBe(false);
    expect(needsBody([parse('[STATUS] == 200'), parse('has([BODY].errors) == false')])).toBe(true);
  });

  it('accepts what a type answers and names each condition that does not apply', () => {
    const http = validateConditions(['[STATUS] == 200', '[BODY].status == UP', '[HEADER].X == 1'], 'HTTP');
    expect(http.problems).toEqual([]);
    expect(http.conditions).toHaveLength(3);
    expect(validateConditions(['[CONNECTED] == true', '[RESPONSE_TIME] < 300', '[IP] == 127.0.0.1'], 'TCP').problems).toEqual([]);
    const tcp = validateConditions(['[CONNECTED] == true', 'len([HEADER].X) > 0', '[STATUS] ==200'], 'TCP');
    expect(tcp.conditions).toEqual([]);
    expect(tcp.problems).toEqual([
      { index: 1, column: 5, message: '[HEADER] does not apply to TCP resources (they have [CONNECTED], [RESPONSE_TIME], [IP], [BODY])' },
      { index: 2, column: 10, message: 'put a space on each side of ==' },
    ]);
    expect(validateConditions(['[IP] == 1.2.3.4'], 'DOCKER').problems[0]).toMatchObject({ index: 0, column: 1 });
    expect(validateConditions(['[CONNECTED] == true', '[RESPONSE_TIME] < 5s'], 'DOCKER').problems).toEqual([]);
  });

  it('takes at most 32 conditions', () => {
    expect(validateConditions(Array(32).fill('[STATUS] == 200'), 'HTTP').problems).toEqual([]);
    expect(validateConditions(Array(33).fill('[STATUS] == 200'), 'HTTP').problems).toEqual([
      { index: 32, column: 1, message: 'at most 32 conditions' },
    ]);
  });
});
