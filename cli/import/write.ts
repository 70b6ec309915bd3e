import { writeFileSync } from 'node:fs';
import { validateSpec } from '../apply/spec.ts';
import type { Draft } from './draft.ts';

/** The apply file's sections, in apply's order, empty ones left out. */
export function applyFile(d: Draft): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of ['groups', 'resources', 'notifiers', 'alertRules', 'maintenance', 'statusPages'] as const)
    if (d[key].length) out[key] = d[key];
  return out;
}

/**
 * The file as apply reads it, checked by apply's own validators first, its `${ENV}` secrets
 * set to a stand-in: an import never writes a file that `apply -f` refuses.
 */
export async function renderApplyFile(d: Draft, format: 'yaml' | 'json', source: string): Promise<string> {
  const file = applyFile(d);
  const env = { ...process.env, ...Object.fromEntries([...d.env.keys()].map((k) => [k, 'placeholder'])) };
  validateSpec(JSON.parse(JSON.stringify(file)), `the file made from ${source}`, env);
  if (format === 'json') return `${JSON.stringify(file, null, 2)}\n`;
  const { stringify } = await import('yaml');
  return stringify(file, { lineWidth: 0 });
}

/** The report: what was left behind, then the variables to set before `apply`. */
export function reportText(d: Draft): string {
  const lines = [...d.report];
  if (d.env.size) lines.push(...[...d.env].map(([name, what]) => `set ${name}: ${what}`));
  return lines.length ? `${lines.join('\n')}\n` : '';
}

/** Writes the file (stdout when no path), the report (stderr when no path), and a summary. */
export async function emit(d: Draft, source: string, opts: { output?: string; write?: string; report?: string }): Promise<void> {
  const format = opts.output === 'json' || (!opts.output && opts.write?.endsWith('.json')) ? 'json' : 'yaml';
  const text = await renderApplyFile(d, format, source);
  const report = reportText(d);
  if (opts.write) writeFileSync(opts.write, text);
  else process.stdout.write(text);
  if (opts.report) writeFileSync(opts.report, report);
  else process.stderr.write(report);
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const summary = [
    count(d.groups.length, 'group'),
    count(d.resources.length, 'resource'),
    count(d.notifiers.length, 'notifier'),
    count(d.alertRules.length, 'alert rule'),
    count(d.maintenance.length, 'maintenance window'),
    count(d.statusPages.length, 'status page'),
  ].join(', ');
  const where = opts.write ?? 'stdout';
  process.stderr.write(
    `Wrote ${where}: ${summary}; ${count(d.report.length, 'report line')}${opts.report ? ` (${opts.report})` : ''}. Nothing was sent to a daemon: check it with monctl apply -f ${opts.write ?? 'FILE'} --dry-run.\n`,
  );
}
