import { type Command, Option } from 'commander';
import { ConfigError, type ConfigFile } from './file.ts';
import { flagName, type Setting } from './settings.ts';

/** Where a value came from, for error messages and --print-config. */
export type Source = { kind: 'flag'; name: string } | { kind: 'env'; name: string } | { kind: 'file'; name: string } | { kind: 'default' };

export interface Resolved {
  values: Map<string, unknown>;
  sources: Map<string, Source>;
  /** Deprecation notices (an older env var name was used), for stderr. */
  notices: string[];
}

/** `--listen`, `MONCTL_LISTEN`, `/etc/monctl/monctl.yaml: listen`: how messages name a value's origin. */
export function sourceLabel(setting: Setting, source: Source): string {
  if (source.kind === 'file') return `${source.name}: ${setting.key}`;
  return source.kind === 'default' ? `${setting.key} (default)` : source.name;
}

/**
 * Adds the settings that have a flag to `cmd`, each with its env var and its
 * default (as text, for --help). Values are not parsed here: resolveSettings
 * parses whichever source wins, with the same parser as the config file.
 */
export function addSettingOptions(cmd: Command, settings: readonly Setting[]): Command {
  for (const s of settings) {
    if (!s.flag) continue;
    // Choices are checked by the type's parser, not commander's .choices(): one check for flag, env and file.
    const { choices } = s.type as { choices?: readonly string[] };
    const help = [
      s.help,
      choices && `(one of: ${choices.join(', ')})`,
      s.unsetMeans && `(unset: ${s.unsetMeans})`,
      s.deprecatedEnv && `(older env name, deprecated: ${s.deprecatedEnv})`,
    ]
      .filter(Boolean)
      .join(' ');
    const option = new Option(s.flag, help).env(s.env);
    if (option.attributeName() !== s.key) throw new Error(`settings: flag ${s.flag} does not match key ${s.key}`);
    if (s.default) option.default(String(s.type.format(s.default())), s.defaultHelp);
    cmd.addOption(option);
  }
  return cmd;
}

/**
 * Each setting's value, by precedence: flag, then env var, then config file,
 * then default. commander already settled flag against env against default
 * (getOptionValueSource); a value it took from the default gives way to the
 * file's. An empty env var counts as unset (systemd's `Environment=X=`).
 * Settings without a flag (secrets) are read from the env here.
 */
export function resolveSettings(
  cmd: Command,
  settings: readonly Setting[],
  file: ConfigFile | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Resolved {
  const values = new Map<string, unknown>();
  const sources = new Map<string, Source>();
  const problems: string[] = [];
  const notices: string[] = [];
  for (const s of settings) {
    const cliSource = s.flag ? cmd.getOptionValueSource(s.key) : undefined;
    let raw: unknown;
    let source: Extract<Source, { kind: 'flag' | 'env' }> | undefined;
    if (cliSource === 'cli') {
      raw = cmd.getOptionValue(s.key);
      source = { kind: 'flag', name: flagName(s)! };
    } else if ((s.flag ? cliSource === 'env' : true) && env[s.env]) {
      raw = env[s.env];
      source = { kind: 'env', name: s.env };
    } else if (s.deprecatedEnv && env[s.deprecatedEnv]) {
      raw = env[s.deprecatedEnv];
      source = { kind: 'env', name: s.deprecatedEnv };
      notices.push(`${s.deprecatedEnv} is deprecated: use ${s.env} (the same values)`);
    }
    if (source) {
      try {
        values.set(s.key, s.type.parse(raw, true));
        sources.set(s.key, source);
      } catch (err) {
        problems.push(`${source.name}: ${(err as Error).message}`);
      }
    } else if (file?.values.has(s.key)) {
      values.set(s.key, file.values.get(s.key));
      sources.set(s.key, { kind: 'file', name: file.file });
    } else if (s.default) {
      values.set(s.key, s.default());
      sources.set(s.key, { kind: 'default' });
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { values, sources, notices };
}
