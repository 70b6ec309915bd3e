import { parseImageReference, parseNamespace } from '../../src/probes/docker/reference.ts';
import type { ProbeInput } from './types.ts';

/** The host a check talks to (`host:port`), for the per-host concurrency cap. */
export function hostKey(input: Pick<ProbeInput, 'type' | 'target' | 'recursive'>): string {
  try {
    if (input.type === 'HTTP') return new URL(input.target).host;
    if (input.type === 'TCP') return input.target.toLowerCase();
    return input.recursive ? parseNamespace(input.target).endpoint : parseImageReference(input.target).endpoint;
  } catch {
    return input.target;
  }
}
