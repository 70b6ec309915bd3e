import { FormatRegistry, Kind, type TSchema, Type, TypeRegistry } from '@sinclair/typebox';
import { LOCAL_DATE_TIME_PATTERN, parseDateTime } from '../../time.ts';

/** Inputs take the wire form or any ISO-8601 date-time with an offset. */
FormatRegistry.Set('date-time-input', (value) => parseDateTime(value) !== undefined);
/** A UUID in its lower-case text form (a push check's ping URL); TypeBox checks no format it is not given. */
FormatRegistry.Set('uuid', (value) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value));

TypeRegistry.Set<{ enum: string[] }>('StringEnum', (schema, value) => typeof value === 'string' && schema.enum.includes(value));

/** A string enum that reads as `{type: string, enum: [...]}` in OpenAPI (no anyOf of consts). */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ [Kind]: 'StringEnum', type: 'string', enum: [...values], ...options });
}

export const Id = Type.Integer({ minimum: -9007199254740991, maximum: 9007199254740991, description: 'integer id' });
export const IdParams = Type.Object({ id: Id });

/** `YYYY-MM-DDTHH:MM:SS` in the daemon's zone, as every response carries it. */
export const DateTime = Type.String({ pattern: LOCAL_DATE_TIME_PATTERN, examples: ['2026-11-21T09:30:00'] });
export const NullableDateTime = Type.Union([DateTime, Type.Null()]);
export const DateTimeInput = Type.String({
  format: 'date-time-input',
  description: '`YYYY-MM-DDTHH:MM:SS` (daemon time zone) or ISO-8601 with an offset',
});

export const Deleted = Type.Object({ status: Type.Literal('deleted') }, { title: 'Deleted' });

export const FieldErrorSchema = Type.Object({ field: Type.String(), message: Type.String() });
export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.Optional(Type.String()),
    instance: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(FieldErrorSchema)),
  },
  { title: 'Problem', description: 'RFC 9457 problem details' },
);

/** `?limit=&before=` for lists that grow without bound (docs/API.md#pagination). */
export const PageQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  before: Type.Optional(Id),
});

/** Request bodies reject fields they do not name. */
export function Body<P extends Record<string, TSchema>>(properties: P, title: string) {
  return Type.Object(properties, { additionalProperties: false, title });
}
