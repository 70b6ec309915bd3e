import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { useAdminCli } from './run.ts';

/**
 * `monctl alert-rules` through the real CLI: names resolved for notifiers,
 * groups and resources; defaults shown; update keeps what it is not told;
 * usage errors exit 2, unknown references 3, and the API's 400 names the field.
 */
const cli = useAdminCli();

describe('monctl alert-rules', () => {
  it('add, list, get, update, rm', async () => {
    const { monctl } = cli;
    const notifier = await monctl(['notifiers', 'add', 'ops-hook', '--type', 'webhook', '--url', 'http://127.0.0.1:9/hook']);
    expect(notifier.code, notifier.stderr).toBe(0);
    expect((await monctl(['groups', 'add', 'web'])).code).toBe(0);

    const add = await monctl([
      'alert-rules',
      'add',
      'web-down',
      '--event',
      'incident-opened,INCIDENT_RESOLVED',
      '--notifier',
      'ops-hook',
      '--group',
      'web',
      '--group-wait',
      '10',
      '-o',
      'json',
    ]);
    expect(add.code, add.stderr).toBe(0);
    const rule = JSON.parse(add.stdout);
    expect(rule).toMatchObject({
      name: 'web-down',
      events: ['INCIDENT_OPENED', 'INCIDENT_RESOLVED'],
      scope: 'LISTED',
      groupWaitSeconds: 10,
      repeatIntervalMinutes: 240,
      enabled: true,
      resourceIds: [],
      agentIds: [],
    });

    const list = await monctl(['alert-rules', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/web-down\s+INCIDENT_OPENED,INCIDENT_RESOLVED\s+ops-hook\s+groups \d+\s+10s\s+240m/);

    const update = await monctl(['alert-rules', 'update', 'web-down', '--repeat', '0', '--all', '-o', 'json']);
    expect(update.code, update.stderr).toBe(0);
    expect(JSON.parse(update.stdout)).toMatchObject({
      scope: 'ALL',
      groupIds: [],
      repeatIntervalMinutes: 0,
      groupWaitSeconds: 10,
      events: ['INCIDENT_OPENED', 'INCIDENT_RESOLVED'],
    });
    expect((await monctl(['alert-rules', 'get', 'web-down'])).stdout).toMatch(/never/);

    expect((await monctl(['alert-rules', 'rm', 'web-down', '--yes'])).code).toBe(0);
    expect((await monctl(['alert-rules', 'get', 'web-down'])).code).toBe(3);
  });

  it('refuses what cannot route', async () => {
    const { monctl } = cli;
    const noEvent = await monctl(['alert-rules', 'add', 'x', '--notifier', 'ops-hook']);
    expect(noEvent.code).toBe(2);
    expect(noEvent.stderr).toMatch(/--event/);
    const badKind = await monctl(['alert-rules', 'add', 'x', '--event', 'EXPLODED', '--notifier', 'ops-hook']);
    expect(badKind.code).toBe(2);
    expect(badKind.stderr).toMatch(/INCIDENT_OPENED/);
    const unknown = await monctl(['alert-rules', 'add', 'x', '--event', 'AGENT_DOWN', '--notifier', 'nobody']);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toMatch(/no notifier named "nobody"/);
    const missing = await monctl(['alert-rules', 'add', 'x', '--event', 'AGENT_DOWN', '--notifier', '999999']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/notifierIds/);
  });
});

describe('apply -f alertRules', () => {
  const file = (name: string, text: string) => {
    const path = join(cli.home.dir, name);
    writeFileSync(path, text);
    return path;
  };
  const spec = (wait: number) => `
groups:
  - name: payments
notifiers:
  - name: pager
    type: NTFY
    url: http://127.0.0.1:9/
    topic: pay
    token: \${PAGER_TOKEN}
resources:
  - name: checkout
    type: HTTP
    target: http://127.0.0.1:9/checkout
    groups: [payments]
alertRules:
  - name: payments-down
    events: [INCIDENT_OPENED, incident_resolved]
    notifiers: [pager]
    groups: [payments]
    resources: [checkout]
    groupWaitSeconds: ${wait}
`;
  const apply = (path: string, extra: string[] = []) => cli.monctl(['apply', '-f', path, ...extra], { env: { PAGER_TOKEN: 'tk_pager' } });

  it('creates a rule naming what the same file creates, leaves it alone when unchanged, updates and prunes it', async () => {
    const first = await apply(file('rules.yaml', spec(15)));
    expect(first.code, first.stderr).toBe(0);
    const rule = (await cli.d.admin.call(operations.listAlertRules)).find((r) => r.name === 'payments-down')!;
    const group = (await cli.d.admin.call(operations.listGroups)).find((g) => g.name === 'payments')!;
    expect(rule).toMatchObject({
      events: ['INCIDENT_OPENED', 'INCIDENT_RESOLVED'],
      groupIds: [group.id],
      groupWaitSeconds: 15,
      repeatIntervalMinutes: 240,
    });

    const again = await apply(file('rules.yaml', spec(15)), ['--dry-run']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).not.toMatch(/alert rule/);

    const changed = await apply(file('rules.yaml', spec(45)));
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stdout).toMatch(/alert rule payments-down.*groupWaitSeconds/);
    expect((await cli.d.admin.call(operations.getAlertRule, { params: { id: rule.id } })).groupWaitSeconds).toBe(45);

    const bad = await apply(file('bad.yaml', 'alertRules:\n  - name: x\n    events: [BOOM]\n    notifiers: []\n'));
    expect(bad.code).toBe(2); // an invalid file is a usage error (issue 25)
    expect(bad.stderr).toMatch(/alertRules\[0\]\.events/);
    expect(bad.stderr).toMatch(/alertRules\[0\]\.notifiers/);

    const pruned = await apply(file('none.yaml', spec(45).replace(/alertRules:[\s\S]*$/, '')), ['--prune', '--yes']);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect((await cli.d.admin.call(operations.listAlertRules)).map((r) => r.name)).not.toContain('payments-down');
  });
});
