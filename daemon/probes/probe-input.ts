/**
 * What one check of a resource is given (src/probes/types.ts ProbeInput), built in one place from
 * either a stored row (the scheduler) or a request body (`POST /admin/api/resources/test`), so
 * that a check without saving runs exactly as the saved resource would.
 */
import type { Static } from '@sinclair/typebox';
import type { ResourceCreate } from '../../src/api/schemas/monitoring.ts';
import { conditionsOf } from './resource-conditions.ts';
import type { ProbeInput, ResourceType } from './types.ts';

/** The columns of `resources` a check reads. */
export const PROBE_COLUMNS = [
  'id',
  'resource_type',
  'target',
  'skip_tls',
  'recursive',
  'interval_seconds',
  'next_run_at',
  'active',
  'quorum',
  'conditions',
] as const;

/** A `resources` row as PROBE_COLUMNS selects it. */
export interface ProbeRow {
  id: number;
  resource_type: string;
  target: string;
  skip_tls: number;
  recursive: number;
  interval_seconds: number;
  next_run_at: number | null;
  active: number;
  quorum: string;
  conditions: string | null;
}

/** The check of a stored resource. */
export function probeInputOf(row: ProbeRow): ProbeInput {
  return {
    resourceId: row.id,
    type: row.resource_type as ResourceType,
    target: row.target,
    skipTLS: row.skip_tls === 1,
    recursive: row.recursive === 1,
    conditions: conditionsOf(row.conditions),
  };
}

/** The check of a resource body that was validated as a create would validate it; `resourceId` 0 (nothing stored). */
export function probeInputFromBody(body: Static<typeof ResourceCreate>): ProbeInput {
  return {
    resourceId: 0,
    type: body.resourceType,
    target: body.target,
    skipTLS: body.skipTLS ?? false,
    recursive: body.recursive ?? false,
    conditions: body.conditions ?? [],
  };
}
