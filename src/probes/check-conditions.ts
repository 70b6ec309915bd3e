/**
 * A resource's conditions as a check uses them (docs/DECISIONS.md#probe-conditions): parsed once
 * per resource and kept while their text stays the same, then evaluated on each check's
 * observation. Shared by the daemon's prober and the agent's, through the runner.
 */
import { type Condition, evaluateAll, needsBody, type Observation, placeholdersOf, validateConditions } from './conditions/index.ts';
import type { ConditionedType } from './conditions/placeholders.ts';
import { CONDITION_FAILED } from './errors.ts';
import type { ProbeInput, ProbeResult } from './types.ts';

/** Resources whose parsed conditions are kept; past it the oldest entry goes (it is parsed again when next seen). */
const MAX_CACHED = 100_000;

export interface CheckConditions {
  list: Condition[];
  /** Whether a condition reads `[BODY]`: the body is read only then. */
  needsBody: boolean;
  /**
   * Whether a condition reads `[STATUS]`: then the conditions alone say which statuses are up, as
   * in Gatus (`[STATUS] == 401`); otherwise a non-2xx answer fails first, with its code, as the seed's.
   */
  readsStatus: boolean;
  /** Why the stored conditions cannot be used (they were valid when saved, not for this type now). */
  problem: string | null;
}

type Outcome = Omit<ProbeResult, 'durationMs' | 'checkedAt'>;

function sameTexts(a: readonly string[], b: readonly string[]): boolean {
  return a === b || (a.length === b.length && a.every((c, i) => c === b[i]));
}

/** Conditions parsed for a type, with what a check needs to know of them; the first problem when they cannot be used. */
export function parseCheckConditions(texts: readonly string[], type: ConditionedType): CheckConditions {
  const { conditions, problems } = validateConditions(texts, type);
  const first = problems[0];
  return first
    ? { list: [], needsBody: false, readsStatus: false, problem: `conditions[${first.index}], column ${first.column}: ${first.message}` }
    : {
        list: conditions,
        needsBody: needsBody(conditions),
        readsStatus: conditions.some((c) => placeholdersOf(c).includes('STATUS')),
        problem: null,
      };
}

/** Parsed conditions by resource id, keyed also by their type and text so that an edit is parsed anew. */
export class ConditionCache {
  private readonly byResource = new Map<number, { type: string; texts: readonly string[]; parsed: CheckConditions }>();

  /** The parsed conditions of this check's resource; null when it has none (the seed's check). */
  get(input: ProbeInput): CheckConditions | null {
    const texts = input.conditions;
    if (!texts || texts.length === 0) return null;
    const hit = this.byResource.get(input.resourceId);
    if (hit && hit.type === input.type && sameTexts(hit.texts, texts)) return hit.parsed;
    const parsed = parseCheckConditions(texts, input.type);
    this.byResource.delete(input.resourceId);
    if (this.byResource.size >= MAX_CACHED) this.byResource.delete(this.byResource.keys().next().value as number);
    this.byResource.set(input.resourceId, { type: input.type, texts, parsed });
    return parsed;
  }
}

/**
 * The verdict of a check that got its answer (`passed`, AVAILABLE) once its conditions are read:
 * unchanged when all hold, else NOT_AVAILABLE with `CONDITION_FAILED` and the first failed
 * condition as Gatus shows it (`[BODY].status (DOWN) == UP`). `outcomes`, when given, receives
 * each condition's outcome in order (a report).
 */
export function judge(
  conditions: CheckConditions,
  observation: Observation,
  passed: Outcome,
  outcomes?: { condition: string; ok: boolean; message: string }[],
): Outcome {
  if (conditions.problem) return { ...passed, status: 'NOT_AVAILABLE', message: conditions.problem, errorCode: CONDITION_FAILED };
  const result = evaluateAll(conditions.list, observation);
  if (outcomes) result.outcomes.forEach((o, i) => outcomes.push({ condition: conditions.list[i].source, ok: o.ok, message: o.message }));
  if (result.ok) return passed;
  const failed = result.outcomes.find((o) => !o.ok);
  return { ...passed, status: 'NOT_AVAILABLE', message: failed?.message ?? 'a condition failed', errorCode: CONDITION_FAILED };
}
