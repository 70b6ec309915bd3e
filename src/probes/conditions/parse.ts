/**
 * Parses a condition the way Gatus reads it: the first operator found, in Gatus's order
 * (`==`, `!=`, `<=`, `>=`, `>`, `<`), with a space on each side, splits it into two sides.
 * Stricter than Gatus where Gatus would silently compare text: an unknown placeholder, a second
 * operator, `pat()` with `<`, or a malformed path are syntax errors naming the column.
 */
import { parseOperand } from './operand.ts';
import { type Condition, ConditionSyntaxError, MAX_CONDITION_LENGTH, type Operand, OPERATORS } from './types.ts';

const BARE_OPERATOR = /==|!=|<=|>=|<|>/;
const MATCHERS = new Set(['pat', 'any', 'regex']);
const matcher = (o: Operand) => MATCHERS.has(o.kind);

function side(text: string, start: number, end: number, what: string, opColumn: number) {
  const raw = text.slice(start, end);
  const trimmed = raw.trim();
  if (trimmed === '') throw new ConditionSyntaxError(`nothing ${what}`, what.startsWith('before') ? 1 : opColumn);
  const column = start + (raw.length - raw.trimStart().length) + 1;
  return { trimmed, column, operand: parseOperand(trimmed, column) };
}

/** Parses one condition, or throws ConditionSyntaxError (and nothing else) for any string. */
export function parse(text: string): Condition {
  if (typeof text !== 'string') throw new ConditionSyntaxError('a condition is text', 1);
  if (text.length > MAX_CONDITION_LENGTH) {
    throw new ConditionSyntaxError(`a condition has at most ${MAX_CONDITION_LENGTH} characters`, MAX_CONDITION_LENGTH + 1);
  }
  if (text.trim() === '') throw new ConditionSyntaxError('empty condition', 1);
  for (const operator of OPERATORS) {
    const separator = ` ${operator} `;
    const at = text.indexOf(separator);
    if (at < 0) continue;
    const again = text.indexOf(separator, at + 1);
    if (again >= 0) throw new ConditionSyntaxError(`a second ${operator}: a condition has one comparison`, again + 2);
    const opColumn = at + 2;
    const left = side(text, 0, at, `before ${operator}`, opColumn);
    const right = side(text, at + separator.length, text.length, `after ${operator}`, opColumn);
    const operands: [Operand, Operand] = [left.operand, right.operand];
    if (operator !== '==' && operator !== '!=') {
      const bad = matcher(left.operand) ? left : matcher(right.operand) ? right : null;
      if (bad) throw new ConditionSyntaxError(`${bad.operand.kind}() works only with == and !=`, bad.column);
    } else if (matcher(left.operand) && matcher(right.operand)) {
      throw new ConditionSyntaxError(`${right.operand.kind}() compares with a value, not with ${left.operand.kind}()`, right.column);
    }
    return { source: text, operator, texts: [left.trimmed, right.trimmed], operands };
  }
  const bare = BARE_OPERATOR.exec(text);
  if (bare) throw new ConditionSyntaxError(`put a space on each side of ${bare[0]}`, bare.index + 1);
  throw new ConditionSyntaxError('expected a comparison: ==, !=, <, <=, > or >= with a space on each side', 1);
}
