import { stringify } from 'yaml';
import type { Resolved, Source } from './resolve.ts';
import type { Setting } from './settings.ts';
import { MASK } from './types.ts';

function origin(source: Source): string {
  return source.kind === 'default' ? 'default' : `${source.kind} ${source.name}`;
}

/**
 * `monctl daemon --print-config`: the effective settings as YAML in the
 * config-file format, each with a comment saying where its value came from.
 * Secrets are shown as `********` on a commented-out line (and the loader
 * refuses the mask as a value). Unset optional settings are commented out too.
 */
/** The type's own masked form when it has one (a URL with its password masked), else the mask. */
function maskedOf(s: Setting, value: unknown): string | number | boolean {
  return s.type.masks ? s.type.format(value) : MASK;
}

export function printConfig(settings: readonly Setting[], r: Resolved): string {
  const lines = [
    '# monctl daemon: effective configuration (flags > environment > config file > defaults).',
    '# The comment after each value says where it came from; secrets are masked.',
  ];
  for (const s of settings) {
    if (!r.values.has(s.key)) {
      lines.push(`# ${s.key}:  # not set: ${s.unsetMeans ?? 'no default'}`);
      continue;
    }
    const shown = s.secret ? maskedOf(s, r.values.get(s.key)) : s.type.format(r.values.get(s.key));
    const line = `${stringify({ [s.key]: shown }).trimEnd()}  # ${origin(r.sources.get(s.key)!)}`;
    // A secret's line is commented out, so that the output stays a valid config file: fed back, it must not set the password to the mask.
    lines.push(s.secret ? `# ${line} (secret, masked)` : line);
  }
  return `${lines.join('\n')}\n`;
}
