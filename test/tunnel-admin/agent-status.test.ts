import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Value } from '@sinclair/typebox/value';
import { TopologyEvents } from '../../src/api/schemas/tunnel.ts';
import { findAgentByToken } from '../../daemon/tunnel-admin/agent-auth.ts';
import { markConnected, markDisconnected, publishTopology } from '../../daemon/tunnel-admin/agent-status.ts';
import { InProcessDaemon } from './in-process.ts';
import { watch } from './sse-client.ts';

/** The seams the data plane calls: token lookup, agent status, topology events. In-process, real daemon. */
const d = new InProcessDaemon();
beforeAll(async () => {
  await d.start();
});
afterAll(async () => {
  await d.dispose();
});

describe('data-plane seams', () => {
  it('finds an agent by its current token only', async () => {
    const id = (await d.call('POST', '/admin/api/agents', { name: 'seam-auth' })).json().id;
    const old = (await d.call('POST', `/admin/api/agents/${id}/token`)).json().token;
    expect(Number((await findAgentByToken(d.ctx, old))?.id)).toBe(id);
    const current = (await d.call('POST', `/admin/api/agents/${id}/token`)).json().token;
    expect(await findAgentByToken(d.ctx, old)).toBeUndefined();
    expect(Number((await findAgentByToken(d.ctx, current))?.id)).toBe(id);
    for (const bad of ['', 'mta_', current.slice(0, -1), `${current}x`, 'x'.repeat(10_000)]) {
      expect(await findAgentByToken(d.ctx, bad)).toBeUndefined();
    }
  });

  it('marks agents connected and disconnected, with topology events and edges', async () => {
    const id = (await d.call('POST', '/admin/api/agents', { name: 'seam-status' })).json().id;
    const podId = d.ctx.pod.id;
    const w = watch(`${d.url}/admin/sse/topology`, d.key);
    try {
      await w.until((ev) => ev.length >= 1);
      await markConnected(d.ctx, id, { podId, remoteAddress: '127.0.0.1:5555', version: '9.9.9', replaced: false });
      const agent = (await d.call('GET', `/admin/api/agents/${id}`)).json();
      expect(agent).toMatchObject({ status: 'CONNECTED', podId, remoteAddress: '127.0.0.1:5555', version: '9.9.9' });
      expect(agent.connectedAt).not.toBeNull();
      const topo = (await d.call('GET', '/admin/api/topology')).json();
      expect(topo.edges).toContainEqual({ from: `pod:${podId}`, to: `agent:${id}`, kind: 'CONNECTION' });
      publishTopology(d.ctx, 'REQUEST_IN_FLIGHT', { routeId: 1, agentId: id, requestId: 'r1', method: 'GET', path: '/', inFlight: 1 });
      await markDisconnected(d.ctx, id, 'connection closed');
      await markDisconnected(d.ctx, id, 'again'); // not current any more: no second event
      expect((await d.call('GET', `/admin/api/agents/${id}`)).json().status).toBe('DISCONNECTED');
      await markConnected(d.ctx, 999_999, { podId, remoteAddress: 'x', version: null, replaced: false }); // deleted meanwhile: ignored
      await d.call('POST', '/admin/api/agents', { name: 'seam-marker' });
      await w.until((ev) => ev.some((e) => e.kind === 'AGENT_CREATED' && e.data.agent.name === 'seam-marker'));
      const kinds = w.events.slice(1).map((e) => e.kind);
      expect(kinds).toEqual(['AGENT_CONNECTED', 'REQUEST_IN_FLIGHT', 'AGENT_DISCONNECTED', 'AGENT_CREATED']);
      expect(w.events[1].data).toMatchObject({ podId, replaced: false, agent: { id, status: 'CONNECTED' } });
      expect(w.events[3].data).toMatchObject({ reason: 'connection closed', agent: { id, status: 'DISCONNECTED' } });
      for (const e of w.events) expect(Value.Check(TopologyEvents[e.kind as keyof typeof TopologyEvents], e.data), e.kind).toBe(true);
    } finally {
      w.close();
    }
  });
});
