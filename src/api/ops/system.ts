import { Type } from '@sinclair/typebox';
import { defineOperation } from '../operation.ts';
import { StringEnum } from '../schemas/common.ts';

export const systemOperations = {
  health: defineOperation({
    id: 'health', method: 'GET', path: '/actuator/health', tag: 'System', access: 'public',
    summary: 'Readiness: UP once the daemon serves, DOWN while it drains',
    response: Type.Object({ status: StringEnum(['UP', 'DOWN'] as const) }, { title: 'Health' }),
    errors: [503],
  }),
} as const;
