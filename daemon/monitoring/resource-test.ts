import type { resourceOperations } from '../../src/api/ops/resources.ts';
import { MAX_TESTS_IN_FLIGHT } from '../../src/api/schemas/resource-test.ts';
import { HttpError, invalidField } from '../../src/errors.ts';
import { formatDateTime } from '../../src/time.ts';
import type { Handler } from '../http/bind.ts';
import type { DaemonContext } from '../context.ts';
import { DAEMON, DAEMON_LOCATION, type Location, type LocationCheck } from '../probes/locations.ts';
import { probeInputFromBody } from '../probes/probe-input.ts';
import { resolveLocations } from '../probes/resource-locations.ts';
import { checkAt } from '../probes/rounds.ts';
import { checkResourceBody } from './resource-store.ts';

type Op = (typeof resourceOperations)['testResource'];

/**
 * `POST /admin/api/resources/test` (docs/API.md#testing-a-check): one check of a resource body,
 * now, at the daemon or at one agent, built exactly as the saved resource's would be
 * (probeInputFromBody) and validated exactly as create validates (checkResourceBody). Nothing is
 * written and nothing is published: the result goes back to the caller only. At most
 * MAX_TESTS_IN_FLIGHT run at once per daemon, because each holds a connection to a target of the
 * caller's choosing for up to the check's timeout; one more is a 429 at once rather than a queue.
 */
export function testResourceHandler(): Handler<Op> {
  let inFlight = 0;
  return async ({ ctx, body }) => {
    const { location: where, name, ...fields } = body;
    const create = { ...fields, name: name ?? 'test' };
    if (create.resourceType === 'PUSH')
      throw invalidField('resourceType', 'a PUSH resource is not checked, it waits for pings: there is nothing to test');
    checkResourceBody(create);
    const location = where === undefined || where === DAEMON ? DAEMON_LOCATION : await locationOf(ctx, where);
    if (inFlight >= MAX_TESTS_IN_FLIGHT) {
      throw new HttpError(429, 'too-many-tests', `${MAX_TESTS_IN_FLIGHT} test checks are running; retry when one ends`, {
        headers: { 'Retry-After': '1' },
      });
    }
    inFlight++;
    let check: LocationCheck;
    try {
      check = await checkAt(ctx, ctx.prober, probeInputFromBody(create), location, { report: true });
    } finally {
      inFlight--;
    }
    const { result } = check;
    if (!check.ran) throw new HttpError(503, 'location-unavailable', `${location.name} could not check: ${result.message}`);
    return {
      location: location.name,
      status: result.status,
      message: result.message,
      errorCode: result.status === 'AVAILABLE' ? null : result.errorCode,
      durationMs: Math.max(0, Math.round(result.durationMs) || 0),
      checkedAt: formatDateTime(result.checkedAt),
      timing: result.timing ?? null,
      // An agent that predates reports answers the verdict alone.
      report: result.report ?? null,
    };
  };
}

/** An agent by name or id, as `locations` takes them; a 400 naming `location` for none. */
async function locationOf(ctx: Pick<DaemonContext, 'db'>, ref: string | number): Promise<Location> {
  try {
    return (await resolveLocations(ctx.db, [ref]))[0];
  } catch (err) {
    if (err instanceof HttpError && err.status === 400) throw invalidField('location', err.errors?.[0]?.message ?? err.message);
    throw err;
  }
}
