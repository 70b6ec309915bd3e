import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { makePlan } from '../apply/plan.ts';
import type { Step } from '../apply/step.ts';
import { runSteps } from '../apply/run-steps.ts';
import { parseSpecText, validateSpec } from '../apply/spec.ts';
import { confirm, readStdin } from '../io/prompt.ts';
import { paint } from '../output/style.ts';
import { act, type Runtime, withOutput } from '../runtime.ts';

const SIGN = { create: '+', update: '~', delete: '-' } as const;
const COLOUR = { create: 'green', update: 'yellow', delete: 'red' } as const;

function describe(rt: Runtime, s: Step): string {
  return paint(
    rt.colour,
    COLOUR[s.action],
    `${SIGN[s.action]} ${s.action} ${s.kind} ${s.name}${s.changes ? ` (${s.changes.join(', ')})` : ''}`,
  );
}

export function register(program: Command): void {
  withOutput(
    program
      .command('apply')
      .description(
        'make the daemon match a YAML or JSON file of groups, resources, announcements, notifiers, alert rules, maintenance windows, status pages, tunnel agents and routes',
      ),
  )
    .option('-f, --file <file>', 'the file (- for stdin)')
    .option('--help-fields', 'print the fields a file can have, section by section, and exit')
    .option(
      '--prune',
      'delete groups, resources, notifiers, alert rules and status pages the file does not name, announcements apply created that it no longer names, and (if it has the section) maintenance windows, agents and routes it does not name',
    )
    .option('--dry-run', 'print the plan, change nothing')
    .option('-y, --yes', 'do not ask before --prune deletes')
    .action(
      act(async (rt, opts: { file?: string; prune?: boolean; dryRun?: boolean; yes?: boolean; helpFields?: boolean }) => {
        if (opts.helpFields) return void process.stdout.write((await import('../apply/fields.ts')).fieldReference());
        if (opts.file === undefined)
          throw new MonctlError('usage', "required option '-f, --file <file>' not specified (or --help-fields)", ExitCode.usage);
        let text: string;
        try {
          text = opts.file === '-' ? await readStdin() : readFileSync(opts.file, 'utf8');
        } catch (err) {
          throw new MonctlError(
            'usage',
            `cannot read ${opts.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
            ExitCode.usage,
          );
        }
        const spec = validateSpec(await parseSpecText(text, opts.file), opts.file);
        const steps = await makePlan(rt, spec, Boolean(opts.prune));
        const summary = (s: Step) => ({
          action: s.action,
          kind: s.kind,
          name: s.name,
          ...(s.changes ? { changes: s.changes } : {}),
          ...s.shown,
        });
        const deletions = steps.filter((s) => s.action === 'delete');
        // Destructive, so confirmed (README.md#the-cli): asked before the first write, so a "no" changes nothing.
        if (!opts.dryRun && deletions.length) {
          await confirm(
            `Delete ${deletions.length === 1 ? 'this' : `these ${deletions.length}`} (not in ${opts.file === '-' ? 'the file' : opts.file}, --prune)`,
            opts.yes,
            deletions.map((s) => `- ${s.kind} ${s.name}${s.changes ? ` (${s.changes.join(', ')})` : ''}`),
          );
        }
        if (!opts.dryRun) {
          await runSteps(rt, steps);
        }
        // Secrets sent again change nothing the daemon shows: named apart, not counted as updates.
        const resent = steps.filter((s) => s.secretsOnly).map((s) => `${s.kind} ${s.name}`);
        const changed = steps.filter((s) => !s.secretsOnly);
        if (rt.structured)
          return rt.show({
            dryRun: Boolean(opts.dryRun),
            changes: changed.map(summary),
            ...(resent.length ? { secretsSent: resent } : {}),
          });
        const secretsLine = resent.length
          ? `Secrets ${opts.dryRun ? 'would be' : 'were'} sent again (reads never show them to compare): ${resent.join(', ')}.\n`
          : '';
        if (changed.length === 0) return void process.stdout.write(`No changes: the daemon already matches the file.\n${secretsLine}`);
        for (const s of changed) {
          process.stdout.write(`${describe(rt, s)}\n`);
          // Shown once by the daemon: the only chance to save it.
          if (s.shown?.signingSecret)
            process.stdout.write(`    signing secret (save it now, it is not shown again): ${s.shown.signingSecret}\n`);
        }
        const count = (a: Step['action']) => changed.filter((s) => s.action === a).length;
        const totals = `${count('create')} to create, ${count('update')} to update, ${count('delete')} to delete`;
        process.stdout.write(
          opts.dryRun
            ? `Plan: ${totals} (dry run: nothing changed).\n`
            : `Applied: ${count('create')} created, ${count('update')} updated, ${count('delete')} deleted.\n`,
        );
        process.stdout.write(secretsLine);
      }),
    );
}
