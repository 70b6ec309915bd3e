/** The probe interface lives in src/probes/ (shared with the agent, which runs the same checks). */
export type { ProbeInput, ProbeResult, ResourceType } from '../../src/probes/types.ts';
