import { afterAll, beforeAll, expect, it } from 'vitest';
import { ALERT_TEST_ARGS, eventually, itemsOf, settled, startTarget, worldOf, type AlertWorld } from '../alerts/world.ts';
import { startWebhookReceiver } from '../notifiers/receivers.ts';
import { startTunnel, type Tunnel } from '../tunnel/helpers.ts';

/**
 * Alerts from resources checked at an agent (issue 19), end to end: a real
 * daemon, a real agent running the checks, a real Standard Webhooks receiver.
 * The agent is killed for longer than its grace while every target fails:
 * - a resource checked at the agent and the daemon with quorum `any` is down
 *   by the daemon's failure alone; its incident opens, but its alerts are
 *   inhibited by the agent's AGENT_DOWN (never sent, nor its resolution);
 * - one with `majority` over the same two locations is undecided (the agent's
 *   location is unknown): no incident at all;
 * - a resource checked by the daemon only alerts as usual.
 */
let tunnel: Tunnel;
let w: AlertWorld;
let secret = '';
let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  tunnel = await startTunnel(
    [],
    ['--scheduler', 'off', '--agent-grace-seconds', '2', '--notifier-retry-base', '200ms', ...ALERT_TEST_ARGS],
  );
  hook = await startWebhookReceiver(() => secret);
  w = worldOf(tunnel.daemon, await startTarget());
}, 30_000);
afterAll(async () => {
  await tunnel?.close();
  await hook?.close();
  await w?.target.close();
});

it("an agent down: its located resources' alerts are inhibited by its own, an undecided quorum opens nothing, the daemon's alert", async () => {
  const n = await w.notifier('hook', 'WEBHOOK', { url: `${hook.url}/hook` });
  secret = n.signingSecret!;
  await w.rule({ name: 'everything', events: ['INCIDENT_OPENED', 'INCIDENT_RESOLVED', 'AGENT_DOWN', 'AGENT_UP'], notifierIds: [n.id] });
  const both = ['edge-agent', 'daemon'];
  const anyOf = await w.resource('any-of-two', { locations: both, quorum: 'any' });
  const majority = await w.resource('majority-of-two', { locations: both, quorum: 'majority' });
  const direct = await w.resource('direct');
  // Up at both locations first: the agent runs checks.
  await w.check(anyOf.id);
  const up = await w.call('GET', `/admin/api/resources/${anyOf.id}`);
  expect(up.currentStatus).toBe('available');
  expect(up.locationResults.map((r: { location: string; status: string }) => `${r.location} ${r.status}`).sort()).toEqual([
    'daemon available',
    'edge-agent available',
  ]);

  await tunnel.agent.stop('SIGKILL');
  await tunnel.waitStatus('DISCONNECTED');
  w.target.status = 503;
  for (const id of [anyOf.id, majority.id, direct.id]) await w.checks(id, 3); // past the default threshold (3)
  await eventually('AGENT_DOWN', () => hook.verified.some((p) => itemsOf(p).some((i) => i.kind === 'AGENT_DOWN')), 20_000);
  await settled(w.d); // what was held back while the agent was in its grace is routed by now
  const sent = () => hook.verified.flatMap((p) => itemsOf(p).map((i) => `${i.kind} ${i.subject.name}`));
  expect(sent().sort()).toEqual(['AGENT_DOWN edge-agent', 'INCIDENT_OPENED direct']);

  // The decided status: `any` is down (its incident exists, only its alerts were held back), `majority` undecided.
  const anyView = await w.call('GET', `/admin/api/resources/${anyOf.id}`);
  expect(anyView.currentStatus).toBe('not_available');
  expect(anyView.locationResults.find((r: { location: string }) => r.location === 'edge-agent')).toMatchObject({
    status: 'unknown',
    message: 'agent edge-agent is not connected',
  });
  expect(await w.call('GET', `/admin/api/incidents?resourceId=${anyOf.id}`)).toHaveLength(1);
  expect((await w.call('GET', `/admin/api/resources/${majority.id}`)).currentStatus).toBe('unknown');
  expect(await w.call('GET', `/admin/api/incidents?resourceId=${majority.id}`)).toEqual([]);

  // The agent back and the target healthy: AGENT_UP and the daemon's resolution, nothing for the inhibited incident.
  tunnel.agent = tunnel.startAgent();
  await tunnel.waitStatus('CONNECTED');
  w.target.status = 200;
  for (const id of [anyOf.id, direct.id]) await w.check(id);
  expect((await w.call('GET', `/admin/api/resources/${anyOf.id}`)).currentStatus).toBe('available');
  await eventually(
    'AGENT_UP and the resolution',
    () => sent().includes('AGENT_UP edge-agent') && sent().includes('INCIDENT_RESOLVED direct'),
  );
  await settled(w.d);
  expect(sent().filter((s) => s.endsWith('-of-two'))).toEqual([]);
}, 90_000);
