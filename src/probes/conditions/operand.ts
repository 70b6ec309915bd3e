/** One side of a condition: a placeholder (maybe in `len()`/`has()`), `pat()`, `any()`, `regex()` or a literal. */
import { setFlagsFromString } from 'node:v8';
import { compileGlob, GlobError } from './glob.ts';
import { parsePath } from './json-path.ts';
import {
  ConditionSyntaxError,
  MAX_REGEX_LENGTH,
  type Operand,
  PLACEHOLDERS,
  type PlaceholderName,
  type PlaceholderOperand,
} from './types.ts';

// A regex() that backtracks too long falls back to V8's linear-time engine, so a pattern such as
// (a+)+$ on a 1 MiB body costs milliseconds, not the event loop. The fallback cannot run
// backreferences or lookarounds, which is why regex() refuses them.
setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');

/** Gatus placeholders monctl does not resolve: named in the error rather than read as text. */
const UNSUPPORTED = new Set(['DOMAIN_EXPIRATION', 'CONTEXT']);
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const NOT_LINEAR = /\\[1-9]|\\k<|\(\?<?[=!]/;

function placeholder(text: string, column: number, fn: PlaceholderOperand['fn']): PlaceholderOperand | null {
  const m = /^\[([A-Za-z_]+)\]/.exec(text);
  if (!m) return null;
  const name = m[1].toUpperCase();
  if (UNSUPPORTED.has(name)) throw new ConditionSyntaxError(`[${name}] is a Gatus placeholder monctl does not support`, column);
  if (!(PLACEHOLDERS as readonly string[]).includes(name)) {
    throw new ConditionSyntaxError(`unknown placeholder [${m[1]}]; known: ${PLACEHOLDERS.map((p) => `[${p}]`).join(' ')}`, column);
  }
  const rest = text.slice(m[0].length);
  const restColumn = column + m[0].length;
  const node: PlaceholderOperand = { kind: 'placeholder', name: name as PlaceholderName, fn, path: null, header: null, column };
  if (name === 'BODY') {
    if (rest !== '') node.path = parsePath(rest, restColumn);
  } else if (name === 'HEADER') {
    if (rest[0] !== '.' || !HEADER_NAME.test(rest.slice(1))) {
      throw new ConditionSyntaxError('[HEADER] takes a header name, as in [HEADER].Content-Type', restColumn);
    }
    node.header = rest.slice(1).toLowerCase();
  } else if (rest !== '') {
    throw new ConditionSyntaxError(`unexpected text after [${name}]`, restColumn);
  }
  return node;
}

/** `name(` … `)` around `text`, or null; throws when the `)` is missing. */
function call(text: string, name: string, column: number): string | null {
  if (!text.startsWith(`${name}(`)) return null;
  if (!text.endsWith(')')) throw new ConditionSyntaxError(`${name}( has no closing )`, column + text.length);
  return text.slice(name.length + 1, -1);
}

function regex(source: string, column: number): RegExp {
  if (source.length > MAX_REGEX_LENGTH)
    throw new ConditionSyntaxError(`a regex() pattern has at most ${MAX_REGEX_LENGTH} characters`, column);
  const bad = NOT_LINEAR.exec(source);
  if (bad) throw new ConditionSyntaxError('regex() does not take backreferences or lookarounds', column + bad.index);
  try {
    return new RegExp(source);
  } catch (err) {
    throw new ConditionSyntaxError(`regex(): ${(err as Error).message}`, column);
  }
}

/** Parses one side, already trimmed; `column` is where it starts in the condition, 1-based. */
export function parseOperand(text: string, column: number): Operand {
  for (const fn of ['len', 'has'] as const) {
    const inner = call(text, fn, column);
    if (inner === null) continue;
    const lead = inner.length - inner.trimStart().length;
    const node = placeholder(inner.trim(), column + fn.length + 1 + lead, fn);
    if (!node) throw new ConditionSyntaxError(`${fn}() takes a placeholder, as in ${fn}([BODY].items)`, column + fn.length + 1);
    return node;
  }
  const pat = call(text, 'pat', column);
  if (pat !== null) {
    try {
      return { kind: 'pat', match: compileGlob(pat) };
    } catch (err) {
      if (err instanceof GlobError) throw new ConditionSyntaxError(`pat(): ${err.message}`, column + 4 + err.offset);
      throw err;
    }
  }
  const any = call(text, 'any', column);
  if (any !== null) return { kind: 'any', options: any.split(',').map((o) => o.trim()) };
  const re = call(text, 'regex', column);
  if (re !== null) return { kind: 'regex', re: regex(re, column + 6) };
  return placeholder(text, column, null) ?? { kind: 'literal', value: text };
}
