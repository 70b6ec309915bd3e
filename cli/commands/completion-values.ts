import type { Command, Option } from 'commander';

/**
 * The values an option takes, for the completion scripts only (`--type DISCORD`):
 * the commands still check values themselves, with their own usage errors.
 */
const VALUES = new WeakMap<Option, readonly string[]>();

/** Offers `values` after `long` (e.g. `--type`) of `cmd` in shell completion. */
export function offerValues(cmd: Command, long: string, values: readonly string[]): Command {
  const option = cmd.options.find((o) => o.long === long);
  if (option) VALUES.set(option, values);
  return cmd;
}

/** The values offered after an option, if any. */
export const valuesOf = (option: Option): readonly string[] | undefined => VALUES.get(option);
