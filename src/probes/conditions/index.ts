/** The conditions language, shared by the daemon and the agent (docs/DECISIONS.md#probe-conditions). */
export { evaluate, evaluateAll } from './evaluate.ts';
export { parse } from './parse.ts';
export { type ConditionProblem, needsBody, PLACEHOLDERS_BY_TYPE, placeholdersOf, validateConditions } from './placeholders.ts';
export * from './types.ts';
