/** Shared with the agent: src/probes/errors.ts. */
export { describeError } from '../../src/probes/errors.ts';
