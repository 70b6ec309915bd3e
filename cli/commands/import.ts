import type { Command } from 'commander';

/** `monctl import kuma|gatus FILE`: an apply file and a report from another tool's setup (README, Export and import). */
export function register(program: Command): void {
  program.command('import').description("turn Uptime Kuma's backup or Gatus's config into an apply file (not built yet)");
}
