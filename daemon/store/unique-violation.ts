import { conflict, type HttpError } from '../../src/errors.ts';

/** A unique-constraint failure that slipped past the checks (another pod raced us): 409, not 500. */
export function uniqueViolation(err: unknown, field: string): HttpError | undefined {
  const text = String((err as Error)?.message ?? '');
  const code = (err as { code?: string })?.code ?? '';
  if (/UNIQUE constraint|duplicate key/i.test(text) || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505') {
    return conflict(`That ${field} is taken`, field);
  }
  return undefined;
}
