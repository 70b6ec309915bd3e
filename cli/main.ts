import { Command } from 'commander';
import { VERSION } from '../src/version.ts';

/** The admin CLI. Commands arrive with the CLI issue; `monctl daemon` is dispatched in bin/. */
export async function runCli(argv: string[]): Promise<void> {
  const program = new Command('monctl')
    .description('Monitor HTTP, TCP and container-image resources and run reverse tunnels')
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));
  program.command('daemon').description('run the monctl server (see monctl daemon --help)');
  await program.parseAsync(argv);
}
