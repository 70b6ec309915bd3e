import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import { describe } from './types.ts';
import { type Setting, SETTINGS, settingOf } from './settings.ts';

/** A configuration that must not start: one line per problem, already prefixed with the file or flag. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** A config file, read and checked: every key known, every value parsed. */
export interface ConfigFile {
  file: string;
  values: Map<string, unknown>;
}

const squash = (name: string) =>
  name
    .toLowerCase()
    .replace(/^monctl_/, '')
    .replace(/[-_]/g, '');

/** ` (did you mean edgeListen?)` for `edge-listen`, `edge_listen`, `MONCTL_EDGE_LISTEN`. */
function suggestion(key: string): string {
  const near = SETTINGS.find((s) => squash(s.key) === squash(key));
  if (near) return ` (did you mean ${near.key}?)`;
  if (squash(key) === 'tls') return ' (use tlsCert and tlsKey)';
  return ' (see monctl daemon --help; keys are the flags in camelCase)';
}

function parseValue(setting: Setting, raw: unknown, file: string): unknown {
  const value = setting.type.parse(raw, false);
  // Relative paths are relative to the config file, not to wherever the daemon was started from.
  return setting.type.name === 'path' ? resolve(dirname(file), value as string) : value;
}

/**
 * Reads a YAML config file: a flat mapping whose keys are the settings' keys.
 * Throws ConfigError naming the file, the line and column of a syntax error,
 * or the key and the reason for an unknown key or a bad value.
 */
export function loadConfigFile(path: string): ConfigFile {
  const file = resolve(path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError([`${path}: cannot read the config file: ${(err as Error).message}`]);
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: false, lineCounter: lines, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      doc.errors.map((e) => {
        const { line, col } = lines.linePos(e.pos[0]);
        return `${path}: line ${line}, column ${col}: ${e.message}`;
      }),
    );
  }
  const values = new Map<string, unknown>();
  if (doc.contents === null) return { file, values }; // empty, or comments only
  if (!isMap(doc.contents)) {
    throw new ConfigError([`${path}: must be a mapping of settings (key: value), got ${describe(doc.toJS())}`]);
  }
  const problems: string[] = [];
  for (const pair of doc.contents.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
    if (key === undefined) {
      problems.push(`${path}: keys must be plain names, got ${describe((pair.key as { toJSON?: () => unknown })?.toJSON?.())}`);
      continue;
    }
    const setting = settingOf(key);
    if (!setting) {
      problems.push(`${path}: ${key}: unknown key${suggestion(key)}`);
      continue;
    }
    const node = pair.value;
    const raw = isScalar(node) ? node.value : isMap(node) || isSeq(node) ? node.toJSON() : null;
    try {
      values.set(key, parseValue(setting, raw, file));
    } catch (err) {
      problems.push(`${path}: ${key}: ${(err as Error).message}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { file, values };
}
