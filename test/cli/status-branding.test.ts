import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getRaw } from '../status/fetch-raw.ts';
import { png } from '../status/branding-images.ts';
import { useAdminCli } from './run.ts';

const cli = useAdminCli();
const { monctl } = cli;

/** `monctl status-pages create|update` with the branding flags (docs/API.md#branding). */
describe('monctl status-pages: branding flags', () => {
  it('creates with an accent colour, header link, logo and favicon; updates and removes them; refuses bad input', {
    timeout: 90_000,
  }, async () => {
    const logo = join(cli.home.dir, 'logo.png');
    const favicon = join(cli.home.dir, 'icon.svg');
    writeFileSync(logo, png(40, 20));
    writeFileSync(favicon, '<svg viewBox="0 0 2 2" onload="alert(1)"><circle cx="1" cy="1" r="1"/></svg>');
    const add = await monctl([
      'status-pages',
      'create',
      'acme',
      '--title',
      'Acme',
      '--accent-color',
      '#0969da',
      '--header-link',
      'https://acme.example/',
      '--header-link-text',
      'Home',
      '--logo',
      logo,
      '--favicon',
      favicon,
    ]);
    expect(add.code, add.stderr).toBe(0);
    const got = (await monctl(['status-pages', 'get', 'acme', '-o', 'json'])).json();
    expect(got).toMatchObject({ accentColor: '#0969da', headerLink: { url: 'https://acme.example/', text: 'Home' } });
    const served = await getRaw(cli.d.url, '/status/acme/logo');
    expect(served.headers['content-type']).toBe('image/png');
    const icon = await getRaw(cli.d.url, '/status/acme/favicon');
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    expect(icon.text).not.toContain('onload');

    // The text alone keeps the link's URL.
    expect((await monctl(['sp', 'update', 'acme', '--header-link-text', 'Back home'])).code).toBe(0);
    expect((await monctl(['sp', 'get', 'acme', '-o', 'json'])).json().headerLink).toEqual({
      url: 'https://acme.example/',
      text: 'Back home',
    });

    const low = await monctl(['sp', 'update', 'acme', '--accent-color', '#ffff00']);
    expect(low.code).toBe(1); // the daemon's 400, as every refused field
    expect(low.stderr).toContain('accentColor');
    expect(low.stderr).toContain('WCAG AA');
    const big = join(cli.home.dir, 'big.png');
    writeFileSync(big, png(8, 8, [0, 0, 0], 300 * 1024));
    const tooBig = await monctl(['sp', 'update', 'acme', '--logo', big]);
    expect(tooBig.code).toBe(1);
    expect(tooBig.stderr).toContain('The logo must be at most 256 KiB');
    const missing = await monctl(['sp', 'update', 'acme', '--logo', join(cli.home.dir, 'nope.png')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--logo');

    const off = await monctl(['sp', 'update', 'acme', '--no-accent-color', '--no-header-link', '--no-logo', '--no-favicon']);
    expect(off.code, off.stderr).toBe(0);
    expect((await monctl(['sp', 'get', 'acme', '-o', 'json'])).json()).toMatchObject({ accentColor: null, headerLink: null });
    expect((await getRaw(cli.d.url, '/status/acme/logo')).status).toBe(404);
    expect((await getRaw(cli.d.url, '/status/acme/favicon')).status).toBe(404);
  });
});
