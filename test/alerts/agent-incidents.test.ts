import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { agentSlot } from '../helpers/tls.ts';
import { startAgent, startTunnel, type Tunnel } from '../tunnel/helpers.ts';
import { outbox, readDb, until } from './helpers.ts';

/** A real `monctl agent` process killed and restarted against a daemon with a one-second grace. */
describe('agent incidents', () => {
  let tunnel: Tunnel;

  beforeAll(async () => {
    tunnel = await startTunnel([], ['--scheduler', 'off', '--agent-grace-seconds', '1']);
  });
  afterAll(async () => {
    await tunnel?.close();
  });

  const agentIncidents = () => readDb<{ id: number; resolved_at: number | null; cause_error_code: string; maintenance: number }>(
    tunnel.daemon, 'SELECT * FROM incidents WHERE agent_id = ? ORDER BY id', tunnel.agentId);
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
    expect(JSON.parse(events[0].payload)).toMatchObject({ kind: 'AGENT_DOWN', subject: { type: 'agent', id: tunnel.agentId, name: 'edge-agent' } });
    const metrics = await fetch(`${tunnel.daemon.url}/actuator/prometheus`).then((r) => r.text());
    expect(metrics).toContain('monctl_incidents_open{subject="agent"} 1');

    tunnel.startAgent();
    await tunnel.waitStatus('CONNECTED');
    await until(async () => (await agentEvents()).length > 1);
    expect((await agentEvents()).map((e) => [e.kind, e.incident_id])).toEqual([['AGENT_DOWN', incident.id], ['AGENT_UP', incident.id]]);
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
      expect((await outbox(tunnel.daemon, 'agent_id = ?', slot.id)).map((e) => [e.kind, e.suppressed])).toEqual([['AGENT_DOWN', null], ['AGENT_UP', 'deleted']]);
    } finally {
      await agent.stop('SIGKILL');
    }
  });
});
