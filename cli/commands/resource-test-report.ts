import type { Static } from '@sinclair/typebox';
import type { CheckTiming } from '../../src/probes/types.ts';
import type { ResourceTestResult } from '../../src/api/schemas/resource-test.ts';
import { paint, statusColour } from '../output/style.ts';

type Result = Static<typeof ResourceTestResult>;

const ms = (value: number | null) => (value === null ? '-' : `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`);

/** `dns 0.4 ms · connect 0.2 ms · tls - · first byte 3.1 ms · total 4.0 ms` (`-`: the phase did not happen). */
export function timingLine(t: CheckTiming | null | undefined): string | undefined {
  if (!t) return undefined;
  return `dns ${ms(t.dnsMs)} · connect ${ms(t.connectMs)} · tls ${ms(t.tlsMs)} · first byte ${ms(t.firstByteMs)} · total ${ms(t.totalMs)}`;
}

const indent = (text: string) =>
  text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');

/**
 * The readable report of `monctl resources test`: the verdict, each condition ✓ or ✗ with the
 * value seen, the response's status line, headers and body excerpt, and the timing phases.
 */
export function testReport(r: Result, colour: boolean): string {
  const out: string[] = [];
  const verdict = paint(
    colour,
    statusColour(r.status === 'AVAILABLE' ? 'up' : r.status === 'UNKNOWN' ? 'unknown' : 'down') ?? 'bold',
    r.status,
  );
  out.push(`${verdict} at ${r.location}: ${r.message}${r.errorCode ? ` (${r.errorCode})` : ''}, ${r.durationMs} ms`);
  if (!r.report) {
    out.push('', `(${r.location} sent the verdict only: no conditions, response or body to show)`);
  } else {
    if (r.report.conditions.length) {
      out.push('', 'Conditions');
      for (const c of r.report.conditions)
        out.push(
          `  ${c.ok ? paint(colour, 'green', '✓') : paint(colour, 'red', '✗')} ${c.condition}${c.message === c.condition ? '' : `   ${c.message}`}`,
        );
    }
    const res = r.report.response;
    if (res) {
      out.push('', 'Response', `  ${res.status} ${res.statusText}`);
      for (const [name, value] of Object.entries(res.headers))
        for (const v of Array.isArray(value) ? value : [value]) out.push(`  ${name}: ${v}`);
      if (res.body) out.push('', indent(res.body.replace(/\s+$/, '')));
      if (res.bodyTruncated) out.push('  … (the first 4 KiB)');
    }
  }
  const timing = timingLine(r.timing);
  if (timing) out.push('', 'Timing', `  ${timing}`);
  return `${out.join('\n')}\n`;
}
