import { conflict, notFound } from '../../src/errors.ts';
import { stopWatchingAgent } from '../alerts/agents/agent-incidents.ts';
import { publishIncidents } from '../alerts/incidents/events.ts';
import { randomToken, sha256 } from '../auth/tokens.ts';
import type { Handlers } from '../http/bind.ts';
import { toAgent } from './mappers.ts';
import { leavePools } from './pool-leave.ts';
import { publishTopology, routeLogChannel } from './topology-events.ts';

/** Handlers of `/admin/api/agents`: slots, registration tokens, deletion. */
export const agentHandlers: Handlers = {
  async listAgents({ ctx }) {
    const rows = await ctx.db.selectFrom('agents').selectAll().orderBy('id').execute();
    return rows.map(toAgent);
  },

  async createAgent({ ctx, body }) {
    const taken = () => conflict(`An agent named ${body.name} exists`, 'name');
    const row = await ctx.db
      .transaction()
      .execute(async (trx) => {
        if (await trx.selectFrom('agents').select('id').where('name', '=', body.name).executeTakeFirst()) throw taken();
        return trx
          .insertInto('agents')
          .values({ name: body.name, status: 'PENDING', created_at: Date.now() })
          .returningAll()
          .executeTakeFirstOrThrow();
      })
      .catch((err: unknown) => {
        // Another pod inserted the same name between the check and the insert: still a 409.
        const code = String((err as { code?: unknown })?.code ?? '');
        throw code.includes('CONSTRAINT_UNIQUE') || code === '23505' ? taken() : err;
      });
    const agent = toAgent(row);
    publishTopology(ctx, 'AGENT_CREATED', { agent });
    return agent;
  },

  async getAgent({ ctx, params }) {
    const row = await ctx.db.selectFrom('agents').selectAll().where('id', '=', params.id).executeTakeFirst();
    if (!row) throw notFound(`Agent ${params.id} does not exist`);
    return toAgent(row);
  },

  async deleteAgent({ ctx, params }) {
    const { agent, routes, kept, incidents } = await ctx.db.transaction().execute(async (trx) => {
      const agent = await trx.selectFrom('agents').select(['id', 'name']).where('id', '=', params.id).executeTakeFirst();
      if (!agent) throw notFound(`Agent ${params.id} does not exist`);
      // A location of resources (docs/API.md#check-locations): deleting it would silently change where they are checked.
      const using = await trx
        .selectFrom('resource_locations as l')
        .innerJoin('resources as r', 'r.id', 'l.resource_id')
        .select('r.name')
        .where('l.agent_id', '=', params.id)
        .orderBy('r.id')
        .limit(11)
        .execute();
      if (using.length) {
        const names =
          using
            .slice(0, 10)
            .map((r) => r.name)
            .join(', ') + (using.length > 10 ? ', …' : '');
        throw conflict(`Agent ${agent.name} is a check location of resources ${names}: change their locations first`);
      }
      const { gone, kept } = await leavePools(trx, params.id);
      const incidents = await stopWatchingAgent(trx, params.id);
      // Routes served by this agent alone go with it, with their logs (foreign keys cascade).
      await trx.deleteFrom('agents').where('id', '=', params.id).execute();
      return { agent, routes: gone, kept, incidents };
    });
    publishIncidents(ctx, incidents);
    // The row is gone first, so the agent cannot reconnect between these two steps.
    ctx.tunnel.disconnectAgent(params.id, 'agent deleted');
    for (const route of routes) {
      publishTopology(ctx, 'ROUTE_DELETED', { id: Number(route.id), name: route.name });
      ctx.events.drop(routeLogChannel(Number(route.id)));
    }
    if (routes.length || kept.length) ctx.tunnel.routesChanged();
    for (const route of kept) publishTopology(ctx, 'ROUTE_UPDATED', { route });
    publishTopology(ctx, 'AGENT_DELETED', { id: Number(agent.id), name: agent.name });
    return { status: 'deleted' as const };
  },

  async rotateAgentToken({ ctx, params }) {
    const token = randomToken('mta');
    const result = await ctx.db
      .updateTable('agents')
      .set({ token_hash: sha256(token), token_created_at: Date.now() })
      .where('id', '=', params.id)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) throw notFound(`Agent ${params.id} does not exist`);
    // The old token stopped working with the update; a session opened with it ends now.
    ctx.tunnel.disconnectAgent(params.id, 'registration token rotated');
    publishTopology(ctx, 'TOKEN_ROTATED', { agentId: params.id });
    return { token };
  },
};
