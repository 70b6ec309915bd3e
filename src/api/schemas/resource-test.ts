import { Type } from '@sinclair/typebox';
import { Body, DateTime } from './common.ts';
import { CheckTiming } from './check-timing.ts';
import { LocationRef, ResourceCreate } from './monitoring.ts';

/** At most this many checks without saving run at once (per daemon); one more is a 429. */
export const MAX_TESTS_IN_FLIGHT = 4;

const { name, ...fields } = ResourceCreate.properties;

/**
 * `POST /admin/api/resources/test`: a resource body as create takes it (`name` optional, and the
 * fields that only matter to a stored resource ignored), and where to check it.
 */
export const ResourceTestBody = Body(
  {
    ...fields,
    name: Type.Optional(name),
    location: Type.Optional(LocationRef),
  },
  'ResourceTestBody',
);

const ConditionOutcome = Type.Object(
  {
    condition: Type.String(),
    ok: Type.Boolean(),
    message: Type.String({ description: 'the condition with the value seen, as Gatus writes it: `[BODY].status (DOWN) == UP`' }),
  },
  { title: 'ConditionOutcome' },
);

const TestResponse = Type.Object(
  {
    status: Type.Integer(),
    statusText: Type.String(),
    headers: Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())])),
    body: Type.String({ description: 'the first 4 KiB of the decoded body, as text' }),
    bodyTruncated: Type.Boolean(),
  },
  { title: 'TestResponse', description: 'HTTP: the (final) response' },
);

export const ResourceTestResult = Type.Object(
  {
    location: Type.String({ description: "where it ran: `daemon`, or the agent's name" }),
    status: Type.Union([Type.Literal('AVAILABLE'), Type.Literal('NOT_AVAILABLE'), Type.Literal('UNKNOWN')], {
      description: 'UNKNOWN: the check could not decide, or the agent could not check (the message says why)',
    }),
    message: Type.String(),
    errorCode: Type.Union([Type.String(), Type.Null()]),
    durationMs: Type.Integer({ minimum: 0 }),
    checkedAt: DateTime,
    timing: Type.Union([CheckTiming, Type.Null()], { description: 'null: the check gave no phases (DOCKER, or an agent that sends none)' }),
    report: Type.Union(
      [
        Type.Object({
          conditions: Type.Array(ConditionOutcome, { description: 'each condition in order' }),
          response: Type.Union([TestResponse, Type.Null()], { description: 'null when no response came, or for TCP and DOCKER' }),
        }),
        Type.Null(),
      ],
      { description: 'null when the location sent none (an agent too old to report)' },
    ),
  },
  { title: 'ResourceTestResult' },
);
