import type * as t from './types.ts';

/**
 * One row per daemon setting: the single source of the commander options, the
 * config-file keys and their validation, `--print-config`, and the README table.
 * The file key is the flag in camelCase; the env var is `MONCTL_<FLAG>` unless
 * a row keeps an older name. A new setting is one new row (and the line of
 * daemon-config.ts that puts it into DaemonConfig).
 */
export interface Setting<T = unknown> {
  /** The config-file key, and commander's attribute name for the flag. */
  key: string;
  /** `--name <arg>`; absent for a secret, which must not appear in `ps` output (the database URL has one: it need not hold the password). */
  flag?: string;
  env: string;
  type: t.ValueType<T>;
  /** The value when nothing sets it; absent means unset (an optional feature). */
  default?: () => T;
  /** What help and --print-config say about an absent default. */
  unsetMeans?: string;
  /** What --help says the default is, when it depends on where the daemon runs (the value help would show is only this run's). */
  defaultHelp?: string;
  /** An older env var name, still read (after `env`), with a deprecation notice on stderr. */
  deprecatedEnv?: string;
  help: string;
  /** Masked by --print-config (its type's format masks it) and commented out there. */
  secret?: boolean;
}
