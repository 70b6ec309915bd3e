import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import type { Draft } from '../import/draft.ts';

interface Options {
  output?: string;
  write?: string;
  report?: string;
}

function read(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new MonctlError('usage', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, ExitCode.usage);
  }
}

/** Parses, maps and writes; never talks to a daemon (the file is for `apply`, dry run first). */
async function run(file: string, opts: Options, parse: (text: string) => Promise<unknown>, map: (raw: unknown) => Draft): Promise<void> {
  if (opts.output !== undefined && opts.output !== 'yaml' && opts.output !== 'json')
    throw new MonctlError('usage', '-o must be yaml or json', ExitCode.usage);
  const { emit } = await import('../import/write.ts');
  await emit(map(await parse(read(file))), file, opts);
}

const options = (cmd: Command) =>
  cmd
    .option('-o, --output <format>', 'yaml (the default) or json')
    .option('-w, --write <file>', 'write the apply file there (default: stdout)')
    .option('--report <file>', 'write the report of what was not mapped there (default: stderr)');

/** `monctl import kuma|gatus FILE`: an apply file and a report from another tool's setup (README, Export and import). */
export function register(program: Command): void {
  const cmd = program
    .command('import')
    .description("turn Uptime Kuma's JSON backup or Gatus's config into an apply file and a report; nothing is sent to the daemon");
  options(cmd.command('kuma <backup>').description("Uptime Kuma's JSON backup (Settings → Backup → Export)")).action(
    async (file: string, opts: Options) => {
      const { importKuma } = await import('../import/kuma.ts');
      const parse = async (text: string) => {
        try {
          return JSON.parse(text);
        } catch (err) {
          throw new MonctlError('invalid-file', `${file}: invalid JSON: ${(err as Error).message}`, ExitCode.usage);
        }
      };
      await run(file, opts, parse, importKuma);
    },
  );
  options(cmd.command('gatus <config>').description("Gatus's config.yaml")).action(async (file: string, opts: Options) => {
    const { parse } = await import('yaml');
    const { importGatus } = await import('../import/gatus.ts');
    await run(
      file,
      opts,
      async (text) => {
        try {
          return parse(text);
        } catch (err) {
          throw new MonctlError('invalid-file', `${file}: invalid YAML: ${(err as Error).message.split('\n')[0]}`, ExitCode.usage);
        }
      },
      importGatus,
    );
  });
}
