import type { Command } from 'commander';

/** `monctl export`: everything `apply -f` takes, in its format (README, Export and import). */
export function register(program: Command): void {
  program.command('export').description('write everything apply -f takes, in its format (not built yet)');
}
