import { Type } from '@sinclair/typebox';
import { defineOperation } from '../operation.ts';
import { Body, DateTime, DateTimeInput } from '../schemas/common.ts';

/** Ten years: far enough for any schedule a test crosses, small enough to stay a real date. */
const MAX_ADVANCE_SECONDS = 10 * 366 * 86_400;

export const TestClockMove = Body(
  {
    at: Type.Optional({ ...DateTimeInput, description: 'move the clock to this instant (not before its now)' }),
    advanceSeconds: Type.Optional(
      Type.Integer({ minimum: 0, maximum: MAX_ADVANCE_SECONDS, description: 'move the clock forward this many seconds' }),
    ),
  },
  'TestClockMove',
);

export const testClockOperations = {
  moveTestClock: defineOperation({
    id: 'moveTestClock',
    method: 'POST',
    path: '/admin/api/test-clock',
    tag: 'System',
    access: 'admin',
    summary: 'Tests only: move the clock of push deadlines forward',
    description:
      'Only on a daemon started with `--test-clock on` (404 otherwise). Give `at` or `advanceSeconds`; the clock ' +
      'never moves back (400). Deadlines that the move passes are judged at once. Answers the new time.',
    body: TestClockMove,
    response: Type.Object({ now: DateTime }, { title: 'TestClock' }),
    errors: [400, 404],
  }),
} as const;
