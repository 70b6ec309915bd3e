import { afterAll, beforeAll, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { freePort } from '../helpers/free-port.ts';
import { startTunnel, type Tunnel } from '../tunnel/helpers.ts';
import { startWebhookReceiver } from '../notifiers/receivers.ts';
import { ALERT_TEST_ARGS, eventually, itemsOf, settled, startTarget, worldOf, type AlertWorld } from './world.ts';

/**
 * Inhibition: a resource checked through a tunnel route depends on the
 * route's agent. The agent is killed for longer than its grace: one AGENT_DOWN
 * reaches the notifier, and the resource's own incident (it fails too) is
 * held back, then inhibited; no INCIDENT_OPENED is ever sent for it, nor its
 * resolution when the agent comes back. A resource not behind the agent still
 * alerts as usual.
 */
let tunnel: Tunnel;
let w: AlertWorld;
let secret = '';
let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;
let other: Awaited<ReturnType<typeof startTarget>>;

beforeAll(async () => {
  tunnel = await startTunnel([], ['--scheduler', 'off', '--agent-grace-seconds', '2', ...ALERT_TEST_ARGS]);
  hook = await startWebhookReceiver(() => secret);
  other = await startTarget();
  w = worldOf(tunnel.daemon, other);
});
afterAll(async () => {
  await tunnel?.close();
  await hook?.close();
  await other?.close();
});

it("an agent down longer than its grace sends one AGENT_DOWN, and its resources' alerts are inhibited", async () => {
  const service = await startTarget(); // reachable only through the agent's TCP route
  try {
    const port = await freePort();
    await tunnel.daemon.admin.call(operations.createRoute, {
      body: { name: 'svc', type: 'TCP', agentId: tunnel.agentId, target: service.url.replace('http://', ''), listenPort: port },
    });
    const n = await w.notifier('hook', 'WEBHOOK', { url: `${hook.url}/hook` });
    secret = n.signingSecret!;
    await w.rule({ name: 'everything', events: ['INCIDENT_OPENED', 'INCIDENT_RESOLVED', 'AGENT_DOWN', 'AGENT_UP'], notifierIds: [n.id] });
    const behind = await w.call('POST', '/api/resources', {
      name: 'behind-agent',
      resourceType: 'HTTP',
      target: `http://127.0.0.1:${port}/`,
    });
    const direct = await w.resource('direct');
    await eventually('the route to serve', async () => {
      await w.check(behind.id);
      return (await w.call('GET', `/api/resources/${behind.id}`)).currentStatus === 'available';
    });

    await tunnel.agent.stop('SIGKILL');
    await tunnel.waitStatus('DISCONNECTED');
    other.status = 503;
    await w.checks(behind.id, 3); // its incident opens inside the agent's grace: held back
    await w.checks(direct.id, 3); // not behind the agent: alerts as usual
    await eventually('AGENT_DOWN', () => hook.verified.some((p) => itemsOf(p).some((i) => i.kind === 'AGENT_DOWN')), 20_000);
    await settled(w.d);
    const sent = () => hook.verified.flatMap((p) => itemsOf(p).map((i) => `${i.kind} ${i.subject.name}`));
    expect(sent().sort()).toEqual(['AGENT_DOWN edge-agent', 'INCIDENT_OPENED direct']);

    tunnel.agent = tunnel.startAgent();
    await tunnel.waitStatus('CONNECTED');
    await eventually('the route to serve again', async () => {
      await w.check(behind.id);
      return (await w.call('GET', `/api/resources/${behind.id}`)).currentStatus === 'available';
    });
    await eventually('AGENT_UP', () => sent().includes('AGENT_UP edge-agent'));
    await settled(w.d);
    expect(sent().filter((s) => s.endsWith('behind-agent'))).toEqual([]);
    const events = await w.call('GET', `/admin/api/incidents?resourceId=${behind.id}`);
    expect(events.length ?? events.items?.length).toBeGreaterThan(0); // the incident exists; only its alerts were held back
  } finally {
    await service.close();
    other.status = 200;
  }
}, 90_000);
