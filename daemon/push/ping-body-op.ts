import type { pingOperations } from '../../src/api/ops/pings.ts';
import { notFound } from '../../src/errors.ts';
import type { DaemonContext } from '../context.ts';
import type { HandlersOf } from '../http/bind.ts';

/** `GET /admin/api/resources/{id}/history/{historyId}/body`: a ping's whole kept body. */
export function pingBodyHandlers(ctx: Pick<DaemonContext, 'db'>): HandlersOf<typeof pingOperations> {
  return {
    async getPingBody({ params, res }) {
      const row = await ctx.db
        .selectFrom('check_history')
        .innerJoin('check_details', 'check_details.history_id', 'check_history.id')
        .select('ping_body')
        .where('id', '=', params.historyId)
        .where('resource_id', '=', params.id)
        .executeTakeFirst();
      if (!row || row.ping_body === null) throw notFound('No ping body for this history entry of this resource');
      const body = Buffer.from(row.ping_body);
      res.writeHead(200, {
        'Content-Type': 'text/plain; charset=utf-8',
        'Content-Length': body.length,
        'Cache-Control': 'no-store',
        // A job's output may hold anything: never let a browser read it as a page.
        'X-Content-Type-Options': 'nosniff',
        'Content-Security-Policy': "default-src 'none'; sandbox",
      });
      res.end(body);
    },
  };
}
