/**
 * Evaluates a parsed condition on one check's observation, as Gatus does: `==`/`!=` compare as
 * integers when both sides read as Go integers (`0x1 == 1`), else as text; `pat()`, `any()` and
 * `regex()` match the other side; `<`, `<=`, `>`, `>=` read each side as a duration in ms, an
 * integer or a truncated float, and anything else as 0. The message is Gatus's, with each
 * resolved side in parentheses. Unlike Gatus, a side with no value (a missing path or header, a
 * body that is not JSON or was cut at the cap) fails the condition whatever the operator.
 */
import { formatGoDuration, parseGoDuration, parseGoFloatAsInt, parseGoInt } from './go-values.ts';
import { Invalid, resolvePlaceholder } from './resolve.ts';
import { type Condition, type ConditionOutcome, MAX_SHOWN, type Observation, type Operand } from './types.ts';

/** Gatus cuts the value compared with pat() to 25 characters in its message. */
const PATTERN_SHOWN = 25;

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}...(truncated)` : text;
}

function resolve(operand: Operand, text: string, observation: Observation): string | Invalid {
  if (operand.kind === 'placeholder') return resolvePlaceholder(operand, observation);
  return operand.kind === 'literal' ? operand.value : text;
}

function matches(operand: Operand, value: string): boolean | null {
  if (operand.kind === 'pat') return operand.match(value);
  if (operand.kind === 'any') return operand.options.includes(value);
  if (operand.kind === 'regex') return operand.re.test(value);
  return null;
}

function isEqual(a: string, b: string): boolean {
  const x = parseGoInt(a);
  if (x !== null) {
    const y = parseGoInt(b);
    if (y !== null) return x === y;
  }
  return a === b;
}

/** Gatus's number for an ordering operator: a duration in ms, an integer, a truncated float, or 0. */
function toNumber(text: string): number {
  const ms = parseGoDuration(text);
  if (ms !== null && ms !== 0) return ms;
  return parseGoInt(text) ?? parseGoFloatAsInt(text) ?? 0;
}

/** One side as shown: as written, then its value in parentheses when that differs. */
function show(text: string, value: string | Invalid, max: number): string {
  if (value instanceof Invalid) return `${text} (INVALID: ${value.reason})`;
  return value === text ? text : `${text} (${shorten(value, max)})`;
}

function compare(condition: Condition, observation: Observation): ConditionOutcome {
  const { operator, operands, texts } = condition;
  const a = resolve(operands[0], texts[0], observation);
  const b = resolve(operands[1], texts[1], observation);
  const failed = a instanceof Invalid || b instanceof Invalid;
  let ok = false;
  let shownA: string | Invalid = a;
  let shownB: string | Invalid = b;
  if (operator === '==' || operator === '!=') {
    if (!failed) {
      const equal = matches(operands[0], b as string) ?? matches(operands[1], a as string) ?? isEqual(a as string, b as string);
      ok = operator === '==' ? equal : !equal;
    }
  } else if (!failed) {
    const x = toNumber(a as string);
    const y = toNumber(b as string);
    ok = operator === '<' ? x < y : operator === '<=' ? x <= y : operator === '>' ? x > y : x >= y;
    shownA = numberShown(operands[0], texts[0], x);
    shownB = numberShown(operands[1], texts[1], y);
  }
  const maxA = operands[1].kind === 'pat' || operands[1].kind === 'regex' ? PATTERN_SHOWN : MAX_SHOWN;
  const maxB = operands[0].kind === 'pat' || operands[0].kind === 'regex' ? PATTERN_SHOWN : MAX_SHOWN;
  return { ok, message: `${show(texts[0], shownA, maxA)} ${operator} ${show(texts[1], shownB, maxB)}` };
}

/** How Gatus shows a side of an ordering: a certificate's time left as a duration, a written duration as written. */
function numberShown(operand: Operand, text: string, value: number): string {
  if (operand.kind === 'placeholder' && operand.name === 'CERTIFICATE_EXPIRATION' && operand.fn === null) return formatGoDuration(value);
  if (operand.kind === 'literal' && parseGoDuration(text) !== null) return text;
  return String(value);
}

/** Evaluates one condition; never throws. */
export function evaluate(condition: Condition, observation: Observation): ConditionOutcome {
  try {
    return compare(condition, observation);
  } catch (err) {
    // Not expected: the parser admits only what compare() handles. A bug must not crash a check.
    return { ok: false, message: `${condition.source} (evaluation error: ${(err as Error)?.message ?? String(err)})` };
  }
}

/** Evaluates conditions in order; the first failure is what the check's message names. */
export function evaluateAll(conditions: readonly Condition[], observation: Observation): { ok: boolean; outcomes: ConditionOutcome[] } {
  const outcomes = conditions.map((c) => evaluate(c, observation));
  return { ok: outcomes.every((o) => o.ok), outcomes };
}
