import { HttpError } from '../../src/errors.ts';

/**
 * API field → the CLI flag that sets it, for one command. The daemon's
 * problem+json names body fields (`startsAt`); a person at the CLI typed
 * `--start`, so errors that reach them should say `--start`.
 */
export type FlagNames = Record<string, string>;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The text with each mapped field named by its flag. A camelCase field
 * (`startsAt`) is replaced wherever it stands as a word; a plain word
 * (`target`, `name`) only where it names a field (`for target:`, `target: `,
 * at the start), so that "(HTTP target)" stays prose.
 */
export function withFlagNames(text: string, flags: FlagNames): string {
  let out = text;
  for (const [field, flag] of Object.entries(flags)) {
    // An item of a repeatable flag, counted from 1 as the user typed them (`conditions[2]` → `--condition #3`),
    // and a key of a map flag (`headers.X-Api-Key` → `--header X-Api-Key`).
    const at = `(?<=^|[\\s(;,])${escapeRegExp(field)}`; // where a field path starts, not inside a URL
    out = out.replace(new RegExp(`${at}\\[(\\d+)\\]`, 'g'), (_, i: string) => `${flag} #${Number(i) + 1}`);
    out = out.replace(new RegExp(`${at}\\.([\\w-]+)`, 'g'), (_, key: string) => `${flag} ${key}`);
    // A camelCase field or a nested path (`udp.send`) cannot be prose: replaced wherever it stands as a word.
    const word = /[A-Z.]/.test(field) ? `(?<![\\w-])${escapeRegExp(field)}(?!\\w)` : `(?<=^|for |\\n)${escapeRegExp(field)}(?=:)`;
    out = out.replace(new RegExp(word, 'g'), flag);
  }
  return out;
}

/** The same HttpError (status, code, exit code) with its detail and field errors named by flags. */
export function renameFields(err: unknown, flags: FlagNames): unknown {
  if (!(err instanceof HttpError)) return err;
  const errors = err.errors?.map((e) => ({
    field: flags[e.field] ?? withFlagNames(e.field, flags),
    message: withFlagNames(e.message, flags),
  }));
  return new HttpError(err.status, err.code, withFlagNames(err.message, flags), {
    errors,
    headers: err.headers,
    extensions: err.extensions,
    cause: err,
  });
}

/** Awaits `work`; a problem it throws names `flags` instead of API fields. */
export async function namingFlags<T>(flags: FlagNames, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw renameFields(err, flags);
  }
}
