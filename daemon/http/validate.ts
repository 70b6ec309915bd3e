import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value, type ValueError, ValueErrorType } from '@sinclair/typebox/value';
import { badRequest, type FieldError } from '../../src/errors.ts';

/**
 * Validation of params, query and bodies against the operation's schemas,
 * compiled once per schema. Errors name the field in dotted form
 * (`groupIds[1]`, `target`), one message per field, first error wins.
 */
const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

export function checker(schema: TSchema): TypeCheck<TSchema> {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check;
}

function fieldName(path: string, root: string): string {
  if (path === '') return root;
  const parts = path
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let name = root === 'body' ? '' : `${root}.`;
  for (const part of parts) name += /^\d+$/.test(part) ? `[${part}]` : name === '' || name.endsWith('.') ? part : `.${part}`;
  return name === '' ? root : name; // a property named "" still needs a field name
}

function describe(error: ValueError): string {
  const schema = error.schema as Record<string, unknown>;
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return 'is required';
    case ValueErrorType.ObjectAdditionalProperties:
      return 'is not a known field';
    case ValueErrorType.Kind:
    case ValueErrorType.Union: {
      if (Array.isArray(schema.enum)) return `must be one of: ${schema.enum.join(', ')}`;
      // A nullable or alternative value: say what is accepted rather than "expected union value".
      const members = Array.isArray(schema.anyOf) ? (schema.anyOf as Array<Record<string, unknown>>) : [];
      const nullable = members.some((m) => m.type === 'null') ? ' or null' : '';
      if (members.some((m) => m.format === 'date-time-input'))
        return `must be a date-time: YYYY-MM-DDTHH:MM:SS or ISO-8601 with an offset${nullable}`;
      const types = [...new Set(members.map((m) => m.type).filter((t): t is string => typeof t === 'string'))];
      if (types.length) return `must be ${types.join(' or ')}`;
      break;
    }
    case ValueErrorType.StringFormat:
      if (schema.format === 'date-time-input') return 'must be a date-time: YYYY-MM-DDTHH:MM:SS or ISO-8601 with an offset';
      break;
    case ValueErrorType.StringPattern:
      if (typeof schema.description === 'string') return `must be ${schema.description}`;
      break;
  }
  return error.message.charAt(0).toLowerCase() + error.message.slice(1);
}

export function fieldErrors(schema: TSchema, value: unknown, root: string): FieldError[] {
  const seen = new Map<string, string>();
  for (const error of checker(schema).Errors(value)) {
    const field = fieldName(error.path, root);
    if (!seen.has(field)) seen.set(field, describe(error));
    if (seen.size >= 20) break;
  }
  return [...seen].map(([field, message]) => ({ field, message }));
}

/** Validates a JSON body; throws 400 with field errors. */
export function validateBody<T>(schema: TSchema, value: unknown): T {
  if (checker(schema).Check(value)) return value as T;
  const errors = fieldErrors(schema, value, 'body');
  throw badRequest(`Invalid request body: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`, errors);
}

/**
 * Path and query values arrive as strings: convert them to the schema's types
 * (`"12"` to 12), apply defaults, then validate. Unknown query parameters are
 * ignored, as browsers and proxies add their own.
 */
export function validateStrings<T>(schema: TSchema, raw: Record<string, string | string[] | undefined>, root: 'path' | 'query'): T {
  const input: Record<string, unknown> = {};
  const known = (schema as { properties?: Record<string, unknown> }).properties ?? {};
  for (const [key, value] of Object.entries(raw)) {
    if (key in known && value !== undefined) input[key] = Array.isArray(value) ? value[value.length - 1] : value;
  }
  // Value.Convert is lenient ("1.5", "0x10", "1e3", " 1" all become integers) and
  // may convert in place: an integer must be written as one, else the given
  // string stays and fails the check.
  const strings = Object.entries(input);
  const value = Value.Default(schema, Value.Convert(schema, input)) as Record<string, unknown>;
  for (const [key, given] of strings) {
    const type = (known[key] as { type?: unknown }).type;
    if (type === 'integer' && typeof given === 'string' && !/^-?\d+$/.test(given)) value[key] = given;
  }
  if (checker(schema).Check(value)) return value as T;
  const errors = fieldErrors(schema, value, '').map((e) => ({ ...e, field: e.field.replace(/^\./, '') }));
  const where = root === 'path' ? 'path parameter' : 'query parameter';
  throw badRequest(`Invalid ${where}: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`, errors);
}
