import { Type } from '@sinclair/typebox';
import { defineOperation } from '../operation.ts';
import { StringEnum } from '../schemas/common.ts';

export const systemOperations = {
  health: defineOperation({
    id: 'health', method: 'GET', path: '/actuator/health', tag: 'System', access: 'public',
    summary: 'Readiness: UP once the daemon serves; DEGRADED (200) while writes fail for lack of space; DOWN (503) while it drains or when the database is corrupt',
    response: Type.Object({ status: StringEnum(['UP', 'DEGRADED', 'DOWN'] as const) }, { title: 'Health' }),
    errors: [503],
  }),
} as const;
