import { Command } from 'commander';
import { VERSION } from '../../src/version.ts';
import { ExitCode } from '../../src/errors.ts';
import { configureAgentCommand } from './command.ts';

/**
 * The agent on its own: the entry of `dist/agent.mjs` and of the single
 * executable `dist/monctl-agent` (scripts/build.ts). Only the agent's code and
 * what it imports get bundled, so it needs nothing beyond Node (or, as the
 * single executable, nothing at all). `monctl-agent agent …` is accepted too,
 * so a command line written for `monctl agent` works unchanged.
 *
 * No top-level await: the single executable runs this bundled as CommonJS.
 */
const argv = process.argv.slice(2);
if (argv[0] === 'agent') argv.shift();

const program = configureAgentCommand(new Command('monctl-agent'))
  .version(VERSION)
  .showHelpAfterError()
  .exitOverride((err) => process.exit(err.exitCode === ExitCode.ok ? ExitCode.ok : ExitCode.usage));
program.parseAsync(argv, { from: 'user' }).catch((err: Error) => {
  process.stderr.write(`monctl-agent: ${err.message}\n`);
  process.exit(ExitCode.error);
});
