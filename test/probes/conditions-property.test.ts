import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Condition, ConditionSyntaxError, evaluate, type Observation, parse } from '../../src/probes/conditions/index.ts';

/** Pieces of the language, so that random text reaches deep into the parser, not only its first check. */
const PIECES = [
  '[STATUS]',
  '[BODY]',
  '[body]',
  '[HEADER]',
  '[HEADER].X-A',
  '[IP]',
  '[CONNECTED]',
  '[RESPONSE_TIME]',
  '[CERTIFICATE_EXPIRATION]',
  '[FOO]',
  '[DNS_RCODE]',
  '.',
  '..',
  '[',
  ']',
  '[0]',
  '[x]',
  'a',
  'status',
  ' ',
  ' == ',
  ' != ',
  ' < ',
  ' <= ',
  ' > ',
  ' >= ',
  '==',
  'len(',
  'has(',
  'pat(',
  'any(',
  'regex(',
  '(',
  ')',
  ',',
  '*',
  '?',
  '\\',
  '-',
  '^',
  '48h',
  '1h30m',
  '0x1',
  '-5',
  '1.5',
  'true',
  'é',
  '😀',
];
/** A well-formed comparison whose right side is a function of random text: reaches glob, regex and path parsing. */
const structured = fc
  .tuple(
    fc.constantFrom('[STATUS]', '[BODY]', '[HEADER].X-A', 'len([BODY].a)'),
    fc.constantFrom('==', '!=', '<', '>='),
    fc.constantFrom('pat(', 'any(', 'regex(', 'len(', 'has(', '[BODY]', '[HEADER]'),
    fc.string({ maxLength: 12, unit: fc.constantFrom(...'()[]{}*?\\-^$|+.a0,'.split('')) }),
    fc.constantFrom(')', ''),
  )
  .map(([left, op, fn, inner, close]) => `${left} ${op} ${fn}${inner}${close}`);
const conditionText = fc.oneof(
  structured,
  fc.string({ maxLength: 120 }),
  fc.string({ maxLength: 40, unit: 'binary' }),
  fc.array(fc.constantFrom(...PIECES), { maxLength: 14 }).map((parts) => parts.join('')),
);

function tryParse(text: string): Condition | ConditionSyntaxError {
  try {
    return parse(text);
  } catch (err) {
    if (err instanceof ConditionSyntaxError) return err;
    throw err;
  }
}

const json = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v));
const observation: fc.Arbitrary<Observation> = fc.record(
  {
    status: fc.option(fc.integer({ min: 0, max: 999 })),
    responseTimeMs: fc.double({ min: 0, max: 1e7, noNaN: true }),
    body: fc.option(fc.oneof(json, fc.string({ maxLength: 60 }))),
    bodyTruncated: fc.boolean(),
    headers: fc.option(fc.dictionary(fc.constantFrom('x-a', 'content-type', 'server'), fc.oneof(fc.string(), fc.array(fc.string())))),
    certificateExpiresInMs: fc.option(fc.integer({ min: -1e12, max: 1e12 })),
    ip: fc.option(fc.string({ maxLength: 20 })),
    connected: fc.boolean(),
  },
  { requiredKeys: ['responseTimeMs', 'connected'] },
);

describe('conditions: properties', () => {
  it('any string parses or gives a ConditionSyntaxError with a column inside it, never another exception', () => {
    fc.assert(
      fc.property(conditionText, (text) => {
        const result = tryParse(text);
        if (result instanceof ConditionSyntaxError) {
          expect(result.column).toBeGreaterThanOrEqual(1);
          expect(result.column).toBeLessThanOrEqual(Math.min(text.length, 1024) + 1);
          expect(result.message).not.toBe('');
        } else {
          expect(result.source).toBe(text);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('evaluating any parsed condition on any observation gives a verdict and a message, never throws', () => {
    const parsed = conditionText.map(tryParse).filter((c): c is Condition => !(c instanceof ConditionSyntaxError));
    fc.assert(
      fc.property(parsed, observation, (condition, seen) => {
        const outcome = evaluate(condition, seen);
        expect(typeof outcome.ok).toBe('boolean');
        expect(outcome.message).toContain(condition.operator);
        // The safety net in evaluate() is for bugs: the property holds without it.
        expect(outcome.message).not.toContain('(evaluation error:');
      }),
      { numRuns: 2000 },
    );
  });

  it('a valid condition is echoed: the message starts with its left side as written', () => {
    const side = fc.constantFrom('[STATUS]', '[BODY].a[0].b', 'len([BODY].items)', 'has([HEADER].X-A)', '[RESPONSE_TIME]', '42', 'UP');
    const op = fc.constantFrom('==', '!=', '<', '<=', '>', '>=');
    fc.assert(
      fc.property(side, op, side, observation, (left, operator, right, seen) => {
        const outcome = evaluate(parse(`${left} ${operator} ${right}`), seen);
        expect(outcome.message.startsWith(left)).toBe(true);
        expect(outcome.message).toContain(` ${operator} ${right}`);
      }),
    );
  });
});
