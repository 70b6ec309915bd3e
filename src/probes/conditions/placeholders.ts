/**
 * Which placeholders a resource type can answer (docs/DECISIONS.md#probe-conditions), and the checks
 * the API makes on a resource's conditions before it is saved, so that a condition a type can
 * never satisfy is a 400 at creation rather than a failure on every check.
 */
import type { ResourceType } from '../types.ts';
import { parse } from './parse.ts';
import { type Condition, ConditionSyntaxError, MAX_CONDITIONS, type PlaceholderName, type PlaceholderOperand } from './types.ts';

/**
 * HTTP sees a response: everything. TCP sees a connection: whether it opened, how long it took,
 * and the address. DOCKER runs several registry requests (the API root, tokens, manifests,
 * blobs), so no single status, body, header or address is "the" answer: only whether the
 * registry was reached and how long the whole check took.
 */
export const PLACEHOLDERS_BY_TYPE: Record<ConditionedType, readonly PlaceholderName[]> = {
  HTTP: ['STATUS', 'RESPONSE_TIME', 'BODY', 'HEADER', 'CERTIFICATE_EXPIRATION', 'IP', 'CONNECTED'],
  // [BODY]: the first bytes read, with `tcp.send` or `tcp.expect` (empty on a plain connect).
  TCP: ['CONNECTED', 'RESPONSE_TIME', 'IP', 'BODY'],
  DOCKER: ['CONNECTED', 'RESPONSE_TIME'],
  // A push check's success ping: how long the run took (a start before it) and the body it sent.
  PUSH: ['RESPONSE_TIME', 'BODY'],
  // The protocol checks (docs/API.md#check-types). DNS: [BODY] is the answers, one per line, as `dig +short` prints them.
  DNS: ['DNS_RCODE', 'BODY', 'RESPONSE_TIME', 'IP', 'CONNECTED'],
  PING: ['CONNECTED', 'RESPONSE_TIME', 'PACKET_LOSS', 'IP'],
  TLS: ['CONNECTED', 'RESPONSE_TIME', 'CERTIFICATE_EXPIRATION', 'TLS_VERSION', 'TLS_CIPHER', 'IP'],
  UDP: ['CONNECTED', 'RESPONSE_TIME', 'BODY', 'IP'],
  GRPC: ['CONNECTED', 'RESPONSE_TIME', 'BODY', 'CERTIFICATE_EXPIRATION'],
  // [BODY]: the first message received (text), waited for only when a condition reads it.
  WEBSOCKET: ['CONNECTED', 'RESPONSE_TIME', 'BODY', 'CERTIFICATE_EXPIRATION', 'IP'],
  SSH: ['CONNECTED', 'RESPONSE_TIME', 'BODY', 'IP'],
};

/** The types whose conditions are checked: the probed ones and PUSH, whose pings are judged by them. */
export type ConditionedType = ResourceType | 'PUSH';

function placeholderOperands(condition: Condition): PlaceholderOperand[] {
  return condition.operands.filter((o): o is PlaceholderOperand => o.kind === 'placeholder');
}

/** The placeholders a condition reads, each once, in order. */
export function placeholdersOf(condition: Condition): PlaceholderName[] {
  return [...new Set(placeholderOperands(condition).map((o) => o.name))];
}

/** Whether a check must read the response body for these conditions. */
export function needsBody(conditions: readonly Condition[]): boolean {
  return conditions.some((c) => c.operands.some((o) => o.kind === 'placeholder' && o.name === 'BODY'));
}

export interface ConditionProblem {
  /** Position in the list, 0-based. */
  index: number;
  /** 1-based column in that condition. */
  column: number;
  message: string;
}

/** Parses a resource's conditions for a type: the parsed list, or every problem found. */
export function validateConditions(
  list: readonly string[],
  type: ConditionedType,
): { conditions: Condition[]; problems: ConditionProblem[] } {
  const problems: ConditionProblem[] = [];
  const conditions: Condition[] = [];
  if (list.length > MAX_CONDITIONS) {
    problems.push({ index: MAX_CONDITIONS, column: 1, message: `at most ${MAX_CONDITIONS} conditions` });
    return { conditions, problems };
  }
  const allowed = PLACEHOLDERS_BY_TYPE[type];
  list.forEach((text, index) => {
    try {
      const condition = parse(text);
      conditions.push(condition);
      for (const p of placeholderOperands(condition)) {
        if (allowed.includes(p.name)) continue;
        const known = allowed.map((name) => `[${name}]`).join(', ');
        problems.push({ index, column: p.column, message: `[${p.name}] does not apply to ${type} resources (they have ${known})` });
        break;
      }
    } catch (err) {
      if (!(err instanceof ConditionSyntaxError)) throw err;
      problems.push({ index, column: err.column, message: err.message });
    }
  });
  return { conditions: problems.length ? [] : conditions, problems };
}
