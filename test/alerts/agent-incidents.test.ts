import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { agentSlot } from '../helpers/tls.ts';
import { startAgent, startTunnel, type Tunnel } from '../tunnel/helpers.ts';
import { outbox, readDb, subscribe, until } from './helpers.ts';

/** A real `monctl agent` process killed and restarted against a daemon with a one-second grace. */
describe('agent incidents', () => {
  let tunnel: Tunnel;

  beforeAll(async () => {
    tunnel = await startTunnel([], ['--scheduler', 'off', '--agent-grace-seconds', '1']);
  });
  afterAll(async () => {
    await tunnel?.close();
  });

  const agentIncidents = () =>
    readDb<{ id: number; resolved_at: number | null; cause_error_code: string; maintenance: number }>(
      tunnel.daemon,
      'SELECT * FROM incidents WHERE agent_id = ? ORDER BY id',
      tunnel.agentId,
    );
  const agentEvents = () => outbox(tunnel.daemon, 'agent_id = ?', tunnel.agentId);

  it('an agent killed for longer than the grace gives one incident and one AGENT_DOWN; reconnecting gives AGENT_UP', async () => {
    await tunnel.agent.stop('SIGKILL');
    await tunnel.waitStatus('DISCONNECTED');
    await until(async () => (await agentEvents()).length > 0);
    // Several more sweeps: still one incident, one event.
    await new Promise((r) => setTimeout(r, 2500));
    const [incident, ...more] = await agentIncidents();
    expect(more).toEqual([]);
    expect(incident).toMatchObject({ resolved_at: null, cause_error_code: 'AGENT_DISCONNECTED', maintenance: 0 });
    const events = await agentEvents();
    expect(events.map((e) => [e.kind, e.subject_type, e.incident_id, e.suppressed])).toEqual([['AGENT_DOWN', 'agent', incident.id, null]]);
    expect(JSON.parse(events[0].payload)).toMatchObject({
      kind: 'AGENT_DOWN',
      subject: { type: 'agent', id: tunnel.agentId, name: 'edge-agent' },
    });
    const metrics = await fetch(`${tunnel.daemon.url}/actuator/prometheus`).then((r) => r.text());
    expect(metrics).toContain('monctl_incidents_open{subject="agent"} 1');

    tunnel.startAgent();
    await tunnel.waitStatus('CONNECTED');
    await until(async () => (await agentEvents()).length > 1);
    expect((await agentEvents()).map((e) => [e.kind, e.incident_id])).toEqual([
      ['AGENT_DOWN', incident.id],
      ['AGENT_UP', incident.id],
    ]);
    expect(await agentIncidents()).toEqual([expect.objectContaining({ id: incident.id, resolved_at: expect.any(Number) })]);
  });

  it('deleting an agent with an open incident resolves it, suppressed', async () => {
    const slot = await agentSlot(tunnel.daemon, 'doomed', tunnel.dir);
    const agent = startAgent(tunnel.daemon.url, slot.tokenFile);
    try {
      const status = async () => (await tunnel.daemon.admin.call(operations.getAgent, { params: { id: slot.id } })).status;
      await until(async () => (await status()) === 'CONNECTED');
      await agent.stop('SIGKILL');
      await until(async () => (await outbox(tunnel.daemon, 'agent_id = ?', slot.id)).length > 0);
      await tunnel.daemon.admin.call(operations.deleteAgent, { params: { id: slot.id } });
      expect((await outbox(tunnel.daemon, 'agent_id = ?', slot.id)).map((e) => [e.kind, e.suppressed])).toEqual([
        ['AGENT_DOWN', null],
        ['AGENT_UP', 'deleted'],
      ]);
    } finally {
      await agent.stop('SIGKILL');
    }
  });
  it("an agent's own maintenance window marks its incident and suppresses AGENT_DOWN and AGENT_UP; ADMIN alone sees it on /api/events", async () => {
    const d = tunnel.daemon;
    const slot = await agentSlot(d, 'serviced', tunnel.dir);
    const now = Date.now();
    const wire = (ms: number) => new Date(ms).toISOString().slice(0, 19);
    const window = await d.admin.call(operations.createMaintenanceWindow, {
      body: { name: 'agent-work', kind: 'ONE_OFF', startsAt: wire(now - 60_000), endsAt: wire(now + 3_600_000), agentIds: [slot.id] },
    });
    const userToken = (await d.admin.call(operations.createApiKey, { body: { name: 'agent-watcher', role: 'USER' } })).token;
    const asAdmin = subscribe(d, d.adminKey);
    const asUser = subscribe(d, userToken);
    let agent = startAgent(d.url, slot.tokenFile);
    try {
      await Promise.all([asAdmin.opened, asUser.opened]);
      const status = async () => (await d.admin.call(operations.getAgent, { params: { id: slot.id } })).status;
      await until(async () => (await status()) === 'CONNECTED');
      await agent.stop('SIGKILL');
      await until(async () => (await outbox(d, 'agent_id = ?', slot.id)).length > 0);
      agent = startAgent(d.url, slot.tokenFile);
      await until(async () => (await outbox(d, 'agent_id = ?', slot.id)).length > 1);
      expect((await outbox(d, 'agent_id = ?', slot.id)).map((e) => [e.kind, e.suppressed])).toEqual([
        ['AGENT_DOWN', 'maintenance'],
        ['AGENT_UP', 'maintenance'],
      ]);
      const [incident] = await d.admin.call(operations.listIncidents, { query: { agentId: slot.id } });
      expect(incident).toMatchObject({ agentId: slot.id, resourceId: null, maintenance: true, cause: { errorCode: 'AGENT_DISCONNECTED' } });
      await until(() => asAdmin.events.filter((e) => e.data.agentId === slot.id).length === 2);
      expect(asAdmin.events.filter((e) => e.data.agentId === slot.id).map((e) => e.kind)).toEqual(['INCIDENT_OPENED', 'INCIDENT_RESOLVED']);
      expect(asUser.events.filter((e) => e.kind.startsWith('INCIDENT_'))).toEqual([]);
    } finally {
      asAdmin.close();
      asUser.close();
      await agent.stop('SIGKILL');
      await d.admin.call(operations.deleteMaintenanceWindow, { params: { id: window.id } });
    }
  });
});
