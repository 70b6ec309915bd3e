import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { type Receiver, startNtfyReceiver, startWebhookReceiver } from '../notifiers/receivers.ts';
import { useAdminCli } from './run.ts';

/**
 * `monctl apply -f` with a `notifiers:` section: secrets as ${ENV_VAR}
 * references expanded at apply time (an unset variable or a literal secret
 * refuses the whole file), delivered to real receivers, compared by name,
 * pruned with --prune.
 */
const cli = useAdminCli();
let ntfy: Receiver & { messages: unknown[] };
let hook: Receiver & { verified: unknown[] };
const SIGNING = 'whsec_' + Buffer.alloc(32, 9).toString('base64');

beforeAll(async () => {
  ntfy = await startNtfyReceiver('tk_apply-token', 'ops');
  hook = await startWebhookReceiver(() => SIGNING);
});
afterAll(async () => {
  await ntfy?.close();
  await hook?.close();
});

const file = (name: string, text: string) => {
  const path = join(cli.home.dir, name);
  writeFileSync(path, text);
  return path;
};
const apply = (path: string, env: Record<string, string> = {}, extra: string[] = []) =>
  cli.monctl(['apply', '-f', path, ...extra], {
    env: { NTFY_TOKEN: 'tk_apply-token', HOOK_SIGNING: SIGNING, HOOK_AUTH: 'apply-header-secret', ...env },
  });

const spec = (priority: string) => `
notifiers:
  - name: phone
    type: NTFY
    url: __NTFY__
    topic: ops
    priority: ${priority}
    token: \${NTFY_TOKEN}
  - name: hook
    type: WEBHOOK
    url: __HOOK__
    headers:
      Authorization: "Bearer \${HOOK_AUTH}"
    signingSecret: \${HOOK_SIGNING}
`;
const specFile = (name: string, priority = 'high') =>
  file(name, spec(priority).replace('__NTFY__', ntfy.url).replace('__HOOK__', hook.url));
const test = async (name: string) => {
  const n = (await cli.d.admin.call(operations.listNotifiers)).find((x) => x.name === name)!;
  return cli.d.admin.call(operations.testNotifier, { params: { id: n.id } });
};

describe('apply -f notifiers', () => {
  it('refuses the whole file when a variable is unset, naming it; nothing is created', async () => {
    const res = await cli.monctl(['apply', '-f', specFile('unset.yaml')], { env: { HOOK_SIGNING: SIGNING, HOOK_AUTH: 'x' } });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/notifiers\[0\]\.token: environment variable NTFY_TOKEN is not set/);
    expect(await cli.d.admin.call(operations.listNotifiers)).toEqual([]);
  });

  it('refuses a literal secret in the file', async () => {
    const path = file(
      'literal.yaml',
      `notifiers:\n  - name: chat\n    type: SLACK\n    url: https://hooks.example.test/services/T/B/literal\n`,
    );
    const res = await apply(path);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/notifiers\[0\]\.url: is a secret: write it as a \$\{ENV_VAR\} reference/);
    expect(res.stderr).not.toContain('services/T/B');
  });

  it('creates them with the secrets from the environment; they deliver', async () => {
    const res = await apply(specFile('v1.yaml'));
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('+ create notifier phone');
    expect(res.stdout).toContain('+ create notifier hook');
    expect(res.stdout).not.toMatch(/tk_apply-token|apply-header-secret|whsec_/);
    expect(await test('phone')).toMatchObject({ ok: true });
    expect(ntfy.messages).toHaveLength(1);
    expect(await test('hook')).toMatchObject({ ok: true });
    expect(hook.verified).toHaveLength(1);
    expect(hook.received[0].headers.authorization).toBe('Bearer apply-header-secret');
  });

  it('updates what changed; secrets are always sent (the daemon cannot show them to compare)', async () => {
    const res = await apply(specFile('v2.yaml', 'max'), { NTFY_TOKEN: 'tk_apply-token' });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('~ update notifier phone (priority, secrets)');
    // Only secrets: sent, and named apart from the changes (as resources' and routes').
    expect(res.stdout).not.toContain('update notifier hook');
    expect(res.stdout).toMatch(/Secrets were sent again .*: notifier hook/);
    const phone = (await cli.d.admin.call(operations.listNotifiers)).find((x) => x.name === 'phone')!;
    expect(phone.config.priority).toBe(5);
    // A token rotated in the environment reaches the daemon on the next apply.
    const wrong = await apply(specFile('v3.yaml', 'max'), { NTFY_TOKEN: 'tk_rotated-elsewhere' });
    expect(wrong.code, wrong.stderr).toBe(0);
    expect(await test('phone')).toMatchObject({ ok: false, statusCode: 403 });
  });

  it('a WEBHOOK without signingSecret gets one from the daemon, printed once; --prune deletes what the file does not name', async () => {
    const path = file('v4.yaml', `notifiers:\n  - name: fresh\n    type: WEBHOOK\n    url: ${hook.url}\n`);
    const res = await apply(path, {}, ['--prune', '--yes']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(
      /\+ create notifier fresh\n {4}signing secret \(save it now, it is not shown again\): whsec_[A-Za-z0-9+/]+=*\n/,
    );
    expect(res.stdout).toContain('- delete notifier phone');
    expect(res.stdout).toContain('- delete notifier hook');
    expect((await cli.d.admin.call(operations.listNotifiers)).map((n) => n.name)).toEqual(['fresh']);
    const again = await apply(path);
    expect(again.stdout).toBe('No changes: the daemon already matches the file.\n');
  });
});
