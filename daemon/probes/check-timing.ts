import type { CheckTiming } from '../../src/probes/types.ts';

/**
 * The phases of a check as stored (`resources.latest_timing`, `location_results.timing`,
 * migration 0019): JSON of CheckTiming with ms to a tenth, NULL when the check timed none (DOCKER,
 * an agent that sends none).
 */
const PHASES = ['dnsMs', 'connectMs', 'tlsMs', 'firstByteMs', 'totalMs'] as const;

const tenth = (ms: number | null | undefined) =>
  typeof ms === 'number' && Number.isFinite(ms) ? Math.max(0, Math.round(ms * 10) / 10) : null;

/** The column's text for a check's timing. */
export function timingColumn(timing: CheckTiming | undefined): string | null {
  if (!timing) return null;
  return JSON.stringify({
    dnsMs: tenth(timing.dnsMs),
    connectMs: tenth(timing.connectMs),
    tlsMs: tenth(timing.tlsMs),
    firstByteMs: tenth(timing.firstByteMs),
    totalMs: tenth(timing.totalMs) ?? 0,
  });
}

/** The API's timing from the column; null when none was stored or the text is not what this module writes. */
export function timingOf(text: string | null | undefined): CheckTiming | null {
  if (!text) return null;
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    const out = {} as Record<(typeof PHASES)[number], number | null>;
    for (const phase of PHASES) out[phase] = tenth(value[phase] as number | null);
    return { ...out, totalMs: out.totalMs ?? 0 };
  } catch {
    return null;
  }
}
