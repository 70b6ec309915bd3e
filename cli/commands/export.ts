import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { collectSpec } from '../export/collect.ts';
import { envTemplate, renderSpec } from '../export/render.ts';
import { act } from '../runtime.ts';

/** Writes `text` to `file`, or says plainly why not (exit 1, nothing half-written is left claimed). */
function write(file: string, text: string, what: string): void {
  try {
    writeFileSync(file, text, { mode: 0o600 });
  } catch (err) {
    throw new MonctlError('io', `cannot write the ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** `monctl export`: everything `apply -f` takes, in its format (README.md#export). */
export function register(program: Command): void {
  program
    .command('export')
    .description('write everything apply -f takes, in its format: secrets as ${ENV} placeholders, listed on stderr')
    .option('-o, --output <format>', 'yaml or json (default: yaml, or json for a --file ending in .json)')
    .option('-f, --file <file>', 'write the file here instead of stdout (the file apply -f reads)')
    // Not --env-file: Node reads that flag from anywhere on its command line, the script's arguments included.
    .option('--env-template <file>', 'also write the variables to set, as a template of NAME= lines')
    .action(
      act(async (rt, opts: { output?: string; file?: string; envTemplate?: string }) => {
        const format = (opts.output ?? (opts.file && /\.json$/i.test(opts.file) ? 'json' : 'yaml')).toLowerCase();
        if (format !== 'yaml' && format !== 'json')
          throw new MonctlError('usage', `-o ${opts.output}: export writes yaml or json`, ExitCode.usage);
        const { doc, env } = await collectSpec(rt.client);
        const text = await renderSpec(doc, format);
        if (opts.file) write(opts.file, text, 'export');
        else process.stdout.write(text);
        const vars = env.list();
        if (opts.envTemplate) write(opts.envTemplate, envTemplate(vars), 'variables template');
        if (vars.length === 0) rt.info('No secrets: the file needs no variables.');
        else {
          rt.info(`Secrets are \${NAME} placeholders: set these ${vars.length} variables before apply -f:`);
          for (const v of vars) rt.info(`  ${v.name}  (${v.what})`);
        }
      }),
    );
}
