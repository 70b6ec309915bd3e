import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { expectProblem, fieldsOf, send } from '../helpers/http.ts';
import { type Caller, call, ok } from './helpers.ts';

/** Announcement HTML sanitizing and the CORS allow-list, end to end. */
describe('announcements and CORS', () => {
  let d: TestDaemon;
  let admin: Caller;
  beforeAll(async () => {
    d = await startDaemon();
    admin = { kind: 'key', token: d.adminKey };
  });
  afterAll(async () => {
    await d?.stop();
  });

  const post = (content: string) => ok(call(d, admin, 'POST', '/api/announcements', { kind: 'WARNING', content, active: true }));

  describe('sanitizer', () => {
    it('removes scripts, event handlers and javascript: links, on create and on replace', async () => {
      const a = await post(
        '<p>Maintenance<script>alert(1)</script> tonight</p><img src="https://example.com/x.png" onerror="alert(2)"><a href="javascript:alert(3)">click</a><a href="https://status.example.com" onclick="x()">status</a>',
      );
      expect(a.content).not.toMatch(/script|onerror|onclick|javascript:|alert/i);
      expect(a.content).toContain('<p>Maintenance tonight</p>');
      expect(a.content).toContain('<img src="https://example.com/x.png" />');
      expect(a.content).toContain('<a href="https://status.example.com">status</a>');
      const again = await ok(call(d, { kind: 'anonymous' }, 'GET', `/api/announcements/${a.id}`));
      expect(again.content).toBe(a.content);
      const put = await ok(
        call(d, admin, 'PUT', `/api/announcements/${a.id}`, {
          kind: 'PROBLEM',
          content:
            '<svg onload="alert(1)"></svg><iframe src="https://evil.example"></iframe><b style="color:red">bold</b><a href="JaVaScRiPt:alert(1)">x</a>',
          active: true,
        }),
      );
      expect(put.content).not.toMatch(/svg|onload|iframe|style|javascript/i);
      expect(put.content).toContain('<b>bold</b>');
    });

    it('keeps ordinary formatting and refuses content over 64 KiB', async () => {
      const html =
        '<h2>Title</h2><ul><li><strong>one</strong></li><li><em>two</em></li></ul><p><a href="mailto:ops@example.com">mail</a></p>';
      expect((await post(html)).content).toBe(html);
      const big = `<p>${'é'.repeat(33_000)}</p>`; // 66,000 bytes of UTF-8 in fewer than 64 Ki characters
      const p = expectProblem(await call(d, admin, 'POST', '/api/announcements', { kind: 'WARNING', content: big, active: true }), 400);
      expect(fieldsOf(p)).toEqual(['content']);
      expect((await post('x'.repeat(65_536))).content).toHaveLength(65_536);
    });
  });

  describe('CORS', () => {
    const origin = 'https://dashboard.example.com';
    const get = (path: string, from = origin) => send(d.url, 'GET', path, { headers: { origin: from } });
    const preflight = (path: string, from = origin) =>
      send(d.url, 'OPTIONS', path, {
        headers: { origin: from, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-api-key' },
      });
    const corsHeaders = (res: { headers: Record<string, unknown> }) =>
      Object.keys(res.headers).filter((h) => h.startsWith('access-control-'));

    it('sends nothing while the list is empty', async () => {
      expect(await ok(call(d, admin, 'GET', '/admin/api/settings/cors-origins'))).toEqual({ origins: [] });
      expect(corsHeaders(await get('/api/resources'))).toEqual([]);
      expect((await preflight('/api/resources')).status).not.toBe(204);
    });

    it('an added origin gets the headers on the next request, under /api/ only, and loses them after removal', async () => {
      expect(await ok(call(d, admin, 'POST', '/admin/api/settings/cors-origins', { origin }))).toEqual({ origin, origins: [origin] });
      const res = await get('/api/resources');
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe(origin);
      expect(res.headers['access-control-allow-credentials']).toBe('true');
      expect(String(res.headers.vary)).toMatch(/Origin/);
      // Errors carry them too, so that a browser can read the problem.
      expect((await get('/api/resources/1/history')).headers['access-control-allow-origin']).toBe(origin);
      const pre = await preflight('/api/resources');
      expect(pre.status).toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBe(origin);
      expect(String(pre.headers['access-control-allow-methods'])).toMatch(/POST/);
      for (const h of ['Authorization', 'Content-Type', 'X-CSRF-TOKEN', 'X-API-KEY']) {
        expect(String(pre.headers['access-control-allow-headers'])).toContain(h);
      }
      // Another origin, and paths outside /api/, get nothing.
      expect(corsHeaders(await get('/api/resources', 'https://evil.example.com'))).toEqual([]);
      const otherPre = await preflight('/api/resources', 'https://evil.example.com');
      expect(otherPre.status).not.toBe(204);
      expect(corsHeaders(otherPre)).toEqual([]);
      expect(corsHeaders(await get('/actuator/health'))).toEqual([]);
      expect(corsHeaders(await get('/admin/api/groups'))).toEqual([]);
      expect(corsHeaders(await get('/login'))).toEqual([]);

      const removed = await call(d, admin, 'DELETE', `/admin/api/settings/cors-origins?origin=${encodeURIComponent(origin)}`);
      expect(removed.json()).toEqual({ status: 'deleted' });
      expect(corsHeaders(await get('/api/resources'))).toEqual([]);
      expect((await preflight('/api/resources')).status).not.toBe(204);
      expectProblem(await call(d, admin, 'DELETE', `/admin/api/settings/cors-origins?origin=${encodeURIComponent(origin)}`), 404);
      expect(fieldsOf(expectProblem(await call(d, admin, 'DELETE', '/admin/api/settings/cors-origins'), 400))).toEqual(['origin']);
    });

    it('refuses invalid origins with 400 and the reason', async () => {
      for (const [bad, reason] of [
        ['dashboard.example.com', /scheme/],
        ['https://example.com/', /slash/],
        ['https://example.com/app', /path/],
        ['*', /wildcard/],
        ['https://*.example.com', /wildcard/],
        ['https://example.com:0', /port/],
        ['', /length/],
      ] as const) {
        const p = expectProblem(await call(d, admin, 'POST', '/admin/api/settings/cors-origins', { origin: bad }), 400);
        expect(p.errors, bad).toEqual([{ field: 'origin', message: expect.stringMatching(reason) }]);
      }
      expect(await ok(call(d, admin, 'GET', '/admin/api/settings/cors-origins'))).toEqual({ origins: [] });
    });
  });
});
