/**
 * The JSONPath subset of `[BODY].a.b[0].c` (Gatus's): keys after dots, array indexes in brackets,
 * and how Gatus turns the value found into text and a length.
 */
import { ConditionSyntaxError, MAX_PATH_STEPS, type PathStep } from './types.ts';

/** Parses the text after `[BODY]` (`.a[0].b`); `column` is where that text starts, 1-based. */
export function parsePath(text: string, column: number): PathStep[] {
  const steps: PathStep[] = [];
  let i = 0;
  while (i < text.length) {
    if (steps.length >= MAX_PATH_STEPS) throw new ConditionSyntaxError(`a JSON path has at most ${MAX_PATH_STEPS} steps`, column + i);
    if (text[i] === '.') {
      let end = i + 1;
      while (end < text.length && text[end] !== '.' && text[end] !== '[') end++;
      if (end === i + 1) throw new ConditionSyntaxError('empty key in the JSON path', column + i + 1);
      steps.push(text.slice(i + 1, end));
      i = end;
    } else if (text[i] === '[') {
      const close = text.indexOf(']', i);
      const index = close < 0 ? '' : text.slice(i + 1, close);
      if (!/^\d{1,9}$/.test(index)) throw new ConditionSyntaxError('an array index is [digits], as in [0]', column + i);
      steps.push(Number(index));
      i = close + 1;
    } else {
      throw new ConditionSyntaxError('expected . or [ in the JSON path', column + i);
    }
  }
  return steps;
}

/** The value at `steps`, or undefined when a step finds nothing (or null, which Gatus counts as missing). */
export function walk(root: unknown, steps: readonly PathStep[]): unknown {
  let value = root;
  for (const step of steps) {
    if (typeof step === 'number') {
      if (!Array.isArray(value)) return undefined;
      value = value[step];
    } else {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
      value = Object.hasOwn(value, step) ? (value as Record<string, unknown>)[step] : undefined;
    }
    if (value === undefined || value === null) return undefined;
  }
  return value;
}

const byteLength = (s: string) => Buffer.byteLength(s, 'utf8');

/** Go's `json.Marshal` of a decoded value: minified, object keys sorted. */
function goJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(goJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${goJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Go's `fmt.Sprintf("%v", v)` of a decoded value, which Gatus uses for arrays and their items. */
function goFormat(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(goFormat).join(' ')}]`;
  if (typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${k}:${goFormat((value as Record<string, unknown>)[k])}`);
    return `map[${entries.join(' ')}]`;
  }
  return String(value);
}

/** The text Gatus compares for a value found by a path. */
export function jsonText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return goFormat(value);
  if (value !== null && typeof value === 'object') return goJson(value);
  return String(value);
}

/** What `len()` gives for a value found by a path: an array's items, otherwise the text's bytes. */
export function jsonLength(value: unknown): number {
  return Array.isArray(value) ? value.length : byteLength(jsonText(value));
}

export { byteLength };
