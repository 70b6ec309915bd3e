import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { send } from '../helpers/http.ts';
import { useAdminCli } from './run.ts';

const cli = useAdminCli();
const { monctl } = cli;

/** `monctl status-pages subscribers …` and the page's sign-up flags. */
describe('monctl status-pages subscribers', () => {
  it('turns sign-ups on, lists readers with their addresses, adds a webhook (secret shown once) and removes', {
    timeout: 90_000,
  }, async () => {
    const mail = { host: '127.0.0.1', port: 2525, security: 'NONE', from: 'status@example.test', to: ['ops@example.test'] };
    await cli.d.admin.call(operations.createNotifier, { body: { name: 'mail', type: 'EMAIL', config: mail } as never });
    expect((await monctl(['groups', 'add', 'Website'])).code).toBe(0);
    const add = await monctl(['sp', 'add', 'shop', '--title', 'Shop', '--group', 'Website', '--subscriptions', '--email-notifier', 'mail']);
    expect(add.code, add.stderr).toBe(0);
    expect((await monctl(['sp', 'get', 'shop', '-o', 'json'])).json()).toMatchObject({ subscriptions: true, emailNotifierId: 1 });

    const signed = await send(cli.d.url, 'POST', '/status/shop/subscribe', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=Reader%40Example.com',
    });
    expect(signed.status).toBe(202);

    const hook = await monctl(['sp', 'subscribers', 'add-webhook', 'shop', 'https://hooks.example.test/s', '--group', 'Website']);
    expect(hook.code, hook.stderr).toBe(0);
    expect(hook.stdout).toMatch(
      /^Added webhook subscriber 2 to shop\.\nSigning secret \(shown once, verify deliveries with it\): whsec_\S{44}\n$/,
    );

    const list = await monctl(['sp', 'subscribers', 'list', 'shop']);
    expect(list.code, list.stderr).toBe(0);
    const rows = list.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(rows[0]).toEqual(['ID', 'KIND', 'ADDRESS', 'CONFIRMED', 'GROUPS', 'RESOURCES']);
    expect(rows.slice(1).map((r) => r.slice(0, 4))).toEqual([
      ['1', 'EMAIL', 'Reader@Example.com', 'false'],
      ['2', 'WEBHOOK', 'https://hooks.example.test/s', 'true'],
    ]);
    expect(list.stdout).not.toContain('whsec_');

    const bad = await monctl(['sp', 'subscribers', 'add-webhook', 'shop', 'ftp://x.example/']);
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringMatching(/url/)]);
    expect((await monctl(['sp', 'subscribers', 'rm', 'shop', 'x', '--yes'])).code).toBe(2);
    expect((await monctl(['sp', 'subscribers', 'rm', 'shop', '2'])).code).toBe(2); // not a TTY: --yes needed
    const rm = await monctl(['sp', 'subscribers', 'rm', 'shop', '2', '--yes']);
    expect([rm.code, rm.stdout]).toEqual([0, 'Removed subscriber 2 of shop.\n']);
    expect((await monctl(['sp', 'subscribers', 'rm', 'shop', '2', '--yes'])).code).toBe(3);

    const off = await monctl(['sp', 'update', 'shop', '--no-subscriptions', '--no-email-notifier']);
    expect(off.code, off.stderr).toBe(0);
    expect((await monctl(['sp', 'get', 'shop', '-o', 'json'])).json()).toMatchObject({ subscriptions: false, emailNotifierId: null });

    // The same two settings in an apply file, the notifier by name.
    const path = join(cli.home.dir, 'pages.yaml');
    writeFileSync(path, 'statusPages:\n  - slug: shop\n    title: Shop\n    subscriptions: true\n    emailNotifier: mail\n');
    const applied = await monctl(['apply', '-f', path]);
    expect(applied.stdout, applied.stderr).toMatch(/^~ update status page shop \(subscriptions, emailNotifier\)$/m);
    expect((await monctl(['sp', 'get', 'shop', '-o', 'json'])).json()).toMatchObject({ subscriptions: true, emailNotifierId: 1 });
    expect((await monctl(['apply', '-f', path])).stdout).toBe('No changes: the daemon already matches the file.\n');
    writeFileSync(path, 'statusPages:\n  - slug: shop\n    title: Shop\n    emailNotifier: nope\n');
    expect((await monctl(['apply', '-f', path])).code).toBe(3);
  });
});
