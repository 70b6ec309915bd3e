import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, expectProblem, fieldsOf, send } from '../helpers/http.ts';
import { EVIL_SVG, png } from './branding-images.ts';
import { getRaw } from './fetch-raw.ts';

const ASSET_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

/**
 * Branding (docs/API.md#branding): logo and favicon uploads (PNG by magic
 * bytes, SVG sanitised; 413 over the cap, 415 for anything else), served
 * publicly with a strong ETag and a CSP that stops scripts; the accent
 * colour's WCAG AA checks; the header link; what the page and summary show.
 */
describe('status page branding', () => {
  let d: TestDaemon;
  let page: { id: number; slug: string };
  beforeAll(async () => {
    d = await startDaemon();
    page = await d.admin.call(operations.createStatusPage, { body: { slug: 'acme', title: 'Acme' } });
  }, 60_000);
  afterAll(async () => {
    await d?.stop();
  });

  const upload = (
    kind: 'logo' | 'favicon',
    type: string | undefined,
    body: string | Buffer,
    opts: { chunked?: boolean; id?: number } = {},
  ) =>
    send(d.url, 'PUT', `/admin/api/status-pages/${opts.id ?? page.id}/${kind}`, {
      headers: { ...bearer(d.adminKey), ...(type ? { 'content-type': type } : {}) },
      body,
      chunked: opts.chunked,
    });
  const patch = (body: Record<string, unknown>) =>
    send(d.url, 'PATCH', `/admin/api/status-pages/${page.id}`, {
      headers: { ...bearer(d.adminKey), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const summary = async () => JSON.parse((await getRaw(d.url, '/api/status-pages/acme/summary')).text).page;

  it('stores a PNG logo and serves it publicly with a strong ETag, caching, nosniff and the CSP', async () => {
    const logo = png(96, 32);
    const put = await upload('logo', 'image/png', logo);
    expect(put.status).toBe(200);
    expect(put.json()).toMatchObject({ kind: 'logo', contentType: 'image/png', size: logo.length });

    const got = await getRaw(d.url, '/status/acme/logo');
    expect(got.status).toBe(200);
    expect(got.body.equals(logo)).toBe(true);
    expect(got.headers['content-type']).toBe('image/png');
    expect(got.headers['x-content-type-options']).toBe('nosniff');
    expect(got.headers['content-security-policy']).toBe(ASSET_CSP);
    expect(got.headers['cache-control']).toBe('public, max-age=300');
    const etag = String(got.headers.etag);
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/); // strong: no W/
    expect((await getRaw(d.url, '/status/acme/logo', { 'if-none-match': etag })).status).toBe(304);

    // The summary and the page link a versioned URL, cached for a year.
    const { logoUrl } = await summary();
    expect(logoUrl).toBe(`/status/acme/logo?v=${etag.slice(1, 17)}`);
    expect((await getRaw(d.url, logoUrl)).headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const html = (await getRaw(d.url, '/status/acme')).text;
    expect(html).toContain(`<img class="logo" src="${logoUrl}" alt="Acme logo" height="48">`);
    const csp = String((await getRaw(d.url, '/status/acme')).headers['content-security-policy']);
    expect(csp).toContain("img-src 'self'");
  });

  it('sanitises an SVG favicon: no script, handler, javascript: link, foreignObject or outside reference is kept', async () => {
    const put = await upload('favicon', 'image/svg+xml; charset=utf-8', EVIL_SVG);
    expect(put.status).toBe(200);
    const got = await getRaw(d.url, '/status/acme/favicon');
    expect(got.headers['content-type']).toBe('image/svg+xml');
    expect(got.headers['content-security-policy']).toBe(ASSET_CSP);
    const svg = got.text;
    for (const gone of ['<script', 'onload', 'javascript:', 'foreignObject', 'onerror', '<image', '127.0.0.1', 'DOCTYPE', 'alert']) {
      expect(svg).not.toContain(gone);
    }
    // The drawing stays.
    expect(svg).toContain('<rect id="box" width="120" height="48" fill="#0969da" />');
    expect(svg).toContain('viewBox="0 0 120 48"');
    const { faviconUrl } = await summary();
    expect((await getRaw(d.url, '/status/acme')).text).toContain(`<link rel="icon" href="${faviconUrl}">`);
  });

  it('refuses other types (415), PNG bytes that are not PNG, and bodies over the cap (413)', async () => {
    expectProblem(await upload('logo', 'text/html', '<html><script>alert(1)</script></html>'), 415);
    expectProblem(await upload('logo', 'image/gif', Buffer.from('GIF89a')), 415);
    expectProblem(await upload('logo', undefined, png(4, 4)), 415);
    expectProblem(await upload('logo', 'image/png', '<svg xmlns="http://www.w3.org/2000/svg"/>'), 415);
    expectProblem(await upload('logo', 'image/svg+xml', '<html><body>not svg</body></html>'), 415);
    expectProblem(await upload('logo', 'image/svg+xml', png(4, 4)), 415);
    // The logo's cap is 256 KiB, the favicon's 64 KiB: over it, declared or streamed.
    const big = png(8, 8, [0, 0, 0], 256 * 1024);
    expectProblem(await upload('logo', 'image/png', big), 413);
    expectProblem(await upload('logo', 'image/png', big, { chunked: true }), 413);
    expectProblem(await upload('favicon', 'image/png', png(8, 8, [0, 0, 0], 64 * 1024)), 413);
    expect((await upload('favicon', 'image/png', png(8, 8, [0, 0, 0], 60 * 1024))).status).toBe(200);
    // Nothing refused was stored: the logo is still the PNG of the first test.
    expect((await getRaw(d.url, '/status/acme/logo')).headers['content-type']).toBe('image/png');
  });

  it('needs ADMIN, a page that exists, and deletes', async () => {
    expectProblem(
      await send(d.url, 'PUT', `/admin/api/status-pages/${page.id}/logo`, { headers: { 'content-type': 'image/png' }, body: png(4, 4) }),
      401,
    );
    expectProblem(await upload('logo', 'image/png', png(4, 4), { id: 999 }), 404);
    expectProblem(
      await send(d.url, 'PUT', '/admin/api/status-pages/x/logo', {
        headers: { ...bearer(d.adminKey), 'content-type': 'image/png' },
        body: png(4, 4),
      }),
      400,
    );
    const del = () => send(d.url, 'DELETE', `/admin/api/status-pages/${page.id}/favicon`, { headers: bearer(d.adminKey) });
    expect((await del()).status).toBe(200);
    expectProblem(await del(), 404);
    expectProblem(await getRaw(d.url, '/status/acme/favicon').then((r) => ({ ...r, json: () => JSON.parse(r.text) })), 404);
    expect((await summary()).faviconUrl).toBeNull();
    expect((await getRaw(d.url, '/status/acme')).text).toContain('<link rel="icon" href="data:image/svg+xml,');
  });

  it('refuses an accent colour below WCAG AA with 400 naming accentColor, and applies one that passes', async () => {
    for (const [colour, against] of [
      ['#ffff00', '#ffffff'], // yellow on white: 1.07:1
      ['#0000a0', '#0d1117'], // navy: fine on white, lost on the dark page
      ['#8a8f95', '#ffffff'], // grey: 3.3:1 on white
    ] as const) {
      const problem = expectProblem(await patch({ accentColor: colour }), 400);
      expect(fieldsOf(problem)).toEqual(['accentColor']);
      expect(problem.detail).toContain(colour);
      expect(problem.detail).toContain(against);
      expect(problem.detail).toMatch(/WCAG AA needs (4\.5|3):1/);
    }
    expect(fieldsOf(expectProblem(await patch({ accentColor: 'blue' }), 400))).toEqual(['accentColor']);
    const ok = await patch({ accentColor: '#0969DA' });
    expect(ok.status).toBe(200);
    expect(ok.json().accentColor).toBe('#0969da');
    expect((await summary()).accentColor).toBe('#0969da');
    const html = (await getRaw(d.url, '/status/acme')).text;
    expect(html).toContain(':root{--accent:#0969da}@media not (prefers-color-scheme:dark){:root{--link:#0969da}}');
    expect((await patch({ accentColor: null })).json().accentColor).toBeNull();
    expect((await getRaw(d.url, '/status/acme')).text).not.toContain('--accent:#');
  });

  it('takes a header link with an http(s) URL only, and shows it in the header', async () => {
    for (const url of ['javascript:alert(1)', 'data:text/html,hi', 'not a url', 'ftp://example.com/']) {
      expect(fieldsOf(expectProblem(await patch({ headerLink: { url, text: 'Home' } }), 400))).toEqual(['headerLink.url']);
    }
    expect(fieldsOf(expectProblem(await patch({ headerLink: { url: 'https://acme.example/', text: '  ' } }), 400))).toEqual([
      'headerLink.text',
    ]);
    const ok = await patch({ headerLink: { url: 'https://acme.example/', text: 'Back to <Acme>' } });
    expect(ok.json().headerLink).toEqual({ url: 'https://acme.example/', text: 'Back to <Acme>' });
    expect((await summary()).headerLink).toEqual({ url: 'https://acme.example/', text: 'Back to <Acme>' });
    expect((await getRaw(d.url, '/status/acme')).text).toContain('<a class="hl" href="https://acme.example/">Back to &lt;Acme&gt;</a>');
    expect((await patch({ headerLink: null })).json().headerLink).toBeNull();
  });

  it('takes the fields on create, and serves the logo and favicon on the custom hostname', async () => {
    const created = await d.admin.call(operations.createStatusPage, {
      body: {
        slug: 'beta',
        title: 'Beta',
        customHostname: 'status.beta.example',
        accentColor: '#1a7f37',
        headerLink: { url: 'http://beta.example/', text: 'Beta' },
      },
    });
    expect(created).toMatchObject({ accentColor: '#1a7f37', headerLink: { url: 'http://beta.example/', text: 'Beta' } });
    expect((await d.admin.call(operations.getStatusPage, { params: { id: created.id } })).accentColor).toBe('#1a7f37');
    const refused = await send(d.url, 'POST', '/admin/api/status-pages', {
      headers: { ...bearer(d.adminKey), 'content-type': 'application/json' },
      body: JSON.stringify({ slug: 'gamma', title: 'Gamma', accentColor: '#eeeeee' }),
    });
    expect(fieldsOf(expectProblem(refused, 400))).toEqual(['accentColor']);

    const logo = png(32, 32, [26, 127, 55]);
    expect((await upload('logo', 'image/png', logo, { id: created.id })).status).toBe(200);
    expect(
      (await upload('favicon', 'image/svg+xml', '<svg viewBox="0 0 1 1"><rect width="1" height="1"/></svg>', { id: created.id })).status,
    ).toBe(200);
    const host = { host: 'status.beta.example' };
    for (const path of ['/logo', '/status/beta/logo']) {
      const got = await getRaw(d.edgeUrl, path, host);
      expect(got.status).toBe(200);
      expect(got.body.equals(logo)).toBe(true);
      expect(got.headers['content-security-policy']).toBe(ASSET_CSP);
    }
    const favicon = await getRaw(d.edgeUrl, '/favicon', host);
    expect(favicon.headers['content-type']).toBe('image/svg+xml');
    // An SVG without its namespace gets it: it would not draw as an image otherwise.
    expect(favicon.text).toContain('<svg viewBox="0 0 1 1" xmlns="http://www.w3.org/2000/svg">');
    // The page on the hostname links what the hostname serves.
    const html = (await getRaw(d.edgeUrl, '/', host)).text;
    const src = /<img class="logo" src="([^"]+)"/.exec(html)?.[1];
    expect((await getRaw(d.edgeUrl, src!, host)).status).toBe(200);
    // Another page's hostname does not serve this one's logo.
    expect((await getRaw(d.edgeUrl, '/logo', { host: 'other.example' })).status).toBe(404);
  });
});
