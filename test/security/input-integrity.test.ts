import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDateTime } from '../../src/time.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, expectProblem, send } from '../helpers/http.ts';

/**
 * Issue 14, finding 7: input that was silently changed. Invalid UTF-8 and
 * lone surrogates became U+FFFD (so `a\xff` and `a\xfe` named the same
 * group), and `2026-02-30T00:00:00Z` or `T24:00:00Z` rolled over to another
 * day. Each is now a 400 naming the field.
 */
describe('input that cannot be kept as sent is refused, not changed', () => {
  let d: TestDaemon;
  let auth: Record<string, string>;
  beforeAll(async () => {
    d = await startDaemon({ env: { MONCTL_SCHEDULER: 'off' } });
    auth = { ...bearer(d.adminKey), 'content-type': 'application/json' };
  });
  afterAll(async () => {
    await d?.stop();
  });

  const post = (path: string, body: string | Buffer) => send(d.url, 'POST', path, { headers: auth, body });

  it('invalid UTF-8 in a JSON body: 400 naming body and the byte offset; nothing is created', async () => {
    for (const bad of [0xff, 0xfe]) {
      const body = Buffer.concat([Buffer.from('{"name":"grp-a'), Buffer.from([bad]), Buffer.from('","visibility":"PUBLIC"}')]);
      const problem = expectProblem(await post('/admin/api/groups', body), 400);
      expect(problem.errors).toEqual([{ field: 'body', message: 'is not valid UTF-8: invalid byte sequence at byte 14' }]);
    }
    // An overlong encoding and an encoded surrogate (ED A0 80) are invalid UTF-8 too.
    for (const seq of [
      [0xc0, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xe2, 0x82],
    ]) {
      const body = Buffer.concat([Buffer.from('{"name":"x'), Buffer.from(seq), Buffer.from('","visibility":"PUBLIC"}')]);
      expect(expectProblem(await post('/admin/api/groups', body), 400).errors[0]).toEqual({
        field: 'body',
        message: 'is not valid UTF-8: invalid byte sequence at byte 10',
      });
    }
    const groups = (await send(d.url, 'GET', '/admin/api/groups', { headers: auth })).json();
    expect(groups.filter((g: { name: string }) => g.name.startsWith('grp-a') || g.name.startsWith('x'))).toEqual([]);
    // A real U+FFFD, sent as valid UTF-8, is kept as sent.
    const ok = await post('/admin/api/groups', Buffer.from('{"name":"grp-\uFFFD","visibility":"PUBLIC"}'));
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json().name).toBe('grp-\uFFFD');
  });

  it('a lone surrogate written as a JSON escape: 400 naming the field, in values and in keys', async () => {
    const cases: Array<[string, string, string]> = [
      ['{"name":"grp-\\ud800","visibility":"PUBLIC"}', 'name', 'is not well-formed Unicode: lone surrogate U+D800 at character 4'],
      ['{"name":"\\udfffz","visibility":"PUBLIC"}', 'name', 'is not well-formed Unicode: lone surrogate U+DFFF at character 0'],
      ['{"name":["ok","\\uD83D"],"visibility":"PUBLIC"}', 'name[1]', 'is not well-formed Unicode: lone surrogate U+D83D at character 0'],
      ['{"name":"grp-b","visibility":"PUBLIC","\\udc00":1}', 'body', 'has a key that is not well-formed Unicode: "\\udc00"'],
      ['{"name":{"in\\ud800ner":"x"},"visibility":"PUBLIC"}', 'name', 'has a key that is not well-formed Unicode: "in\\ud800ner"'],
    ];
    for (const [body, field, message] of cases) {
      const problem = expectProblem(await post('/admin/api/groups', body), 400);
      expect(problem.errors, body).toEqual([{ field, message }]);
    }
    // A well-formed pair written as escapes is one character, and fine.
    const ok = await post('/admin/api/groups', '{"name":"grp-\\ud83d\\ude00","visibility":"PUBLIC"}');
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json().name).toBe('grp-😀');
  });

  it('invalid percent-encoded UTF-8 in a query string or a path parameter: 400 naming it', async () => {
    const query = await send(d.url, 'DELETE', '/admin/api/settings/cors-origins?origin=http%3A%2F%2Fa%FF.test', { headers: auth });
    expect(expectProblem(query, 400).errors).toEqual([{ field: 'origin', message: 'is not valid UTF-8 once percent-decoded' }]);
    const surrogate = await send(d.url, 'DELETE', '/admin/api/settings/cors-origins?origin=%ED%A0%80', { headers: auth });
    expect(expectProblem(surrogate, 400).errors).toEqual([{ field: 'origin', message: 'is not valid UTF-8 once percent-decoded' }]);
    const key = await send(d.url, 'DELETE', '/admin/api/settings/cors-origins?or%FFigin=x', { headers: auth });
    expect(expectProblem(key, 400).errors).toEqual([
      { field: 'query', message: 'has a parameter name that is not valid UTF-8 once percent-decoded' },
    ]);
    // Stray `%` that is not an escape stays lenient, as before: it is kept as sent.
    const stray = await send(d.url, 'DELETE', '/admin/api/settings/cors-origins?origin=100%', { headers: auth });
    expectProblem(stray, 404);
    // Path parameters were already refused (tinyhttp decodes them with decodeURIComponent, which throws).
    const path = await send(d.url, 'GET', '/api/resources/%FF', { headers: auth });
    expect(expectProblem(path, 400).type).toBe('urn:monctl:problem:bad-uri');
  });

  it('calendar-invalid date-times: 400 naming the field; valid edge dates are kept', async () => {
    // Years ahead, so that a date rolled over would still be accepted (an expiry must be in the future).
    const refused = [
      '2030-02-30T00:00:00Z',
      '2031-02-29T00:00:00Z',
      '2030-04-31T10:00:00+02:00',
      '2030-01-01T24:00:00Z',
      '2030-01-01T23:60:00Z',
      '2030-12-31T23:59:60Z',
      '2030-13-01T00:00:00Z',
      '2030-00-10T00:00:00Z',
      '2030-01-00T00:00:00Z',
      '2030-01-01T00:00:00+24:00',
      '2030-01-01T00:00:00+01:60',
      '2030-02-30T00:00:00',
      '2030-01-01T24:00:00',
    ];
    for (const expiresAt of refused) {
      const res = await post('/admin/api/api-keys', JSON.stringify({ name: `k-${expiresAt}`, role: 'USER', expiresAt }));
      const problem = expectProblem(res, 400);
      expect(problem.errors, expiresAt).toEqual([{ field: 'expiresAt', message: expect.stringMatching(/^must be a date-time/) }]);
    }
    const kept: Array<[string, string]> = [
      ['2028-02-29T23:30:00Z', '2028-02-29T23:30:00'],
      ['2400-02-29T00:00:00+01:00', '2400-02-28T23:00:00'],
      ['2030-12-31T23:59:59.999Z', '2030-12-31T23:59:59'],
      ['2031-01-01T00:30:00+01:00', '2030-12-31T23:30:00'],
    ];
    for (const [expiresAt, stored] of kept) {
      const res = await post('/admin/api/api-keys', JSON.stringify({ name: `k-${expiresAt}`, role: 'USER', expiresAt }));
      expect(res.status, res.text).toBe(200);
      expect(res.json().expiresAt).toBe(stored);
    }
  });

  it('parseDateTime: the calendar and clock ranges, leap years, no leap second, 4-digit years as written', () => {
    expect(parseDateTime('2100-02-29T00:00:00Z')).toBeUndefined(); // 2100 is not a leap year
    expect(parseDateTime('2000-02-29T00:00:00Z')).toBe(Date.UTC(2000, 1, 29));
    expect(parseDateTime('2026-06-30T23:59:60Z')).toBeUndefined();
    expect(parseDateTime('2026-01-01T23:59Z')).toBe(Date.UTC(2026, 0, 1, 23, 59));
    expect(parseDateTime('2026-01-01t10:00:00z')).toBe(Date.UTC(2026, 0, 1, 10));
    expect(parseDateTime('2026-01-01T10:00:00.5+0130')).toBe(Date.UTC(2026, 0, 1, 8, 30, 0, 500));
    // Years below 100 are not 19xx (Date.UTC's legacy mapping).
    expect(new Date(parseDateTime('0050-03-01T00:00:00Z')!).getUTCFullYear()).toBe(50);
    expect(new Date(parseDateTime('0050-03-01T00:00:00')!).getUTCFullYear()).toBe(50);
  });
});
