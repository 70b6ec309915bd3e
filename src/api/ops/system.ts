import { Type } from '@sinclair/typebox';
import { defineOperation } from '../operation.ts';
import { StringEnum } from '../schemas/common.ts';

export const systemOperations = {
  health: defineOperation({
    id: 'health',
    method: 'GET',
    path: '/actuator/health',
    tag: 'System',
    access: 'public',
    summary:
      'Readiness: UP once the daemon serves; DEGRADED (200) while writes fail for lack of space; DOWN (503) while it drains, when the database is corrupt, or (PostgreSQL) while the database cannot be reached',
    response: Type.Object(
      {
        status: StringEnum(['UP', 'DEGRADED', 'DOWN'] as const),
        components: Type.Optional(
          Type.Object(
            {
              db: Type.Object({
                status: StringEnum(['UP', 'DEGRADED', 'DOWN'] as const),
                details: Type.Optional(
                  Type.Object({
                    database: Type.Optional(
                      Type.String({ description: 'PostgreSQL, and where (user@host/database, never the password); ADMIN callers only' }),
                    ),
                    reason: Type.Optional(StringEnum(['full', 'corrupt', 'unavailable'] as const)),
                    error: Type.Optional(Type.String({ description: 'the error code behind a status other than UP' })),
                  }),
                ),
              }),
            },
            {
              description:
                'pods on PostgreSQL only: the shared database as this pod sees it (a pod that cannot reach it is DOWN and runs no checks)',
            },
          ),
        ),
      },
      { title: 'Health' },
    ),
    errors: [503],
  }),
} as const;
