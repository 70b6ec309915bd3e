import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startDaemon } from '../helpers/daemon.ts';
import { startWebhookReceiver } from '../notifiers/receivers.ts';
import { eventually, itemsOf, startTarget, worldOf } from './world.ts';

/**
 * Nothing lost across a crash: the daemon is killed (SIGKILL) while a message
 * is in flight (claimed, sent, not answered). After the restart the message
 * arrives, with the same webhook-id, so the receiver can drop the duplicate.
 * The first daemon's alert loops tick once an hour: its message goes out only
 * because the incident's commit woke the router, and the routing the sender.
 */
const base = mkdtempSync(join(tmpdir(), 'monctl-alert-restart-'));
const cleanup: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
  rmSync(base, { recursive: true, force: true });
});

it('a daemon killed between claim and answer sends the message after restart with the same webhook-id', async () => {
  let secret = '';
  let requests = 0;
  const hook = await startWebhookReceiver(() => secret);
  cleanup.push(() => hook.close());
  const target = await startTarget();
  cleanup.push(() => target.close());
  const dataDir = join(base, 'data');
  const args = ['--scheduler', 'off', '--notifier-retry-base', '200ms'];
  let w = worldOf(await startDaemon({ dataDir, args: [...args, '--alert-tick', '1h'] }), target);
  cleanup.push(() => w.d.stop());
  const n = await w.notifier('hook', 'WEBHOOK', { url: `${hook.url}/hook` });
  secret = n.signingSecret!;
  hook.queue(0); // the first request is accepted and never answered: claimed, sent, waiting
  const r = await w.resource('crashy');
  await w.rule({ name: 'crash', events: ['INCIDENT_OPENED'], notifierIds: [n.id] });
  target.status = 503;
  await w.checks(r.id, 3);
  await eventually('the first attempt to reach the receiver', () => hook.received.length === 1);
  requests = hook.received.length;
  expect(hook.verified).toHaveLength(0);
  await w.d.stop('SIGKILL');

  w = worldOf(await startDaemon({ dataDir, args }), target);
  cleanup.push(() => w.d.stop());
  await eventually('the message after the restart', () => hook.verified.length === 1, 20_000);
  expect(requests).toBe(1);
  expect(hook.received).toHaveLength(2);
  expect(hook.received[1].headers['webhook-id']).toBe(hook.received[0].headers['webhook-id']);
  expect(itemsOf(hook.verified[0]).map((i) => i.subject.name)).toEqual(['crashy']);
  const attempts = await w.call('GET', `/admin/api/notifiers/${n.id}/deliveries`);
  expect(attempts.filter((a: { ok: boolean }) => a.ok)).toHaveLength(1);
}, 60_000);
