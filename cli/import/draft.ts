import { validateConditions } from '../../src/probes/conditions/index.ts';
import type { ConditionedType } from '../../src/probes/conditions/placeholders.ts';

/**
 * What an importer builds: the sections of an apply file (plain objects, in the file's own
 * field names), the report's lines (one per thing left behind, with the reason), and the
 * environment variables its `${ENV}` placeholders name, so that no secret is written out.
 */
export interface Draft {
  groups: Array<{ name: string }>;
  resources: Array<Record<string, unknown>>;
  notifiers: Array<Record<string, unknown>>;
  alertRules: Array<Record<string, unknown>>;
  maintenance: Array<Record<string, unknown>>;
  statusPages: Array<Record<string, unknown>>;
  report: string[];
  /** Variable name → what it holds, in the order first named. */
  env: Map<string, string>;
}

export const newDraft = (): Draft => ({
  groups: [],
  resources: [],
  notifiers: [],
  alertRules: [],
  maintenance: [],
  statusPages: [],
  report: [],
  env: new Map(),
});

/** A group, once: tags, Kuma's group monitors and Gatus's groups all land here. */
export function addGroup(d: Draft, name: string): string {
  if (!d.groups.some((g) => g.name === name)) d.groups.push({ name });
  return name;
}

/** `PREFIX_NAME_FIELD` in upper case, A-Z 0-9 _ only: a placeholder the shell can set. */
export function envName(...parts: string[]): string {
  return parts
    .join('_')
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .replace(/^(\d)/, '_$1');
}

/** A `${NAME}` placeholder for a secret, recorded with what it stands for. */
export function secret(d: Draft, name: string, what: string): string {
  if (!d.env.has(name)) d.env.set(name, what);
  return `\${${name}}`;
}

/** A name the apply file can use for a notifier: 1 to 64 of A-Z a-z 0-9 . _ - */
export const notifierName = (name: string): string =>
  name
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64) || 'notifier';

/** A slug for a push resource or a status page: lower case, digits, - (at most 64). */
export const slug = (name: string): string =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '') || 'imported';

/** The interval in the range apply takes (10 s to a day). */
export const clampInterval = (seconds: number): number => Math.min(86400, Math.max(10, Math.round(seconds)));

/**
 * The conditions the daemon will take for this type; each refused one goes to the report
 * with the parser's reason (an import never writes a file the daemon refuses).
 */
export function keepConditions(d: Draft, who: string, type: ConditionedType, list: string[]): string[] {
  const kept: string[] = [];
  for (const text of list) {
    const { problems } = validateConditions([text], type);
    if (problems.length === 0) kept.push(text);
    else d.report.push(`${who}: condition "${text}" left out: ${problems[0].message}`);
  }
  return kept;
}
