import type { Notifier } from '../../src/api/schemas/notifiers.ts';
import { MonctlError } from '../../src/errors.ts';
import { priorityOf } from '../../src/notifier-fields.ts';
import { ops } from '../api/ops.ts';
import type { Runtime } from '../runtime.ts';
import type { NotifierSpec } from './notifiers-spec.ts';
import type { Step } from './step.ts';

/**
 * The steps that make the daemon's notifiers match the file, by name. Config
 * fields the file names are compared with the daemon's; secrets cannot be
 * (the daemon never shows them), so a notifier whose file entry has secrets is
 * updated on every apply with them, and the plan says `(secrets)`. A WEBHOOK
 * created without a signingSecret gets one from the daemon, shown once.
 */
export async function notifierSteps(rt: Runtime, specs: NotifierSpec[], prune: boolean): Promise<{ upserts: Step[]; deletions: Step[] }> {
  const c = rt.client;
  const current = specs.length || prune ? await c.call(ops.listNotifiers) : [];
  const byName = new Map(current.map((n) => [n.name, n]));
  const wrongType = specs
    .filter((s) => byName.has(s.name) && byName.get(s.name)!.type !== s.type)
    .map(
      (s) =>
        `  notifiers ${s.name}: it is ${byName.get(s.name)!.type} on the server and ${s.type} in the file (delete it first, or rename it)`,
    );
  if (wrongType.length) throw new MonctlError('invalid-file', `the file is invalid; nothing was changed:\n${wrongType.join('\n')}`);

  const upserts: Step[] = [];
  for (const spec of specs) {
    const cur = byName.get(spec.name);
    if (!cur) {
      const step: Step = {
        action: 'create',
        kind: 'notifier',
        name: spec.name,
        run: async () => {
          const made = await c.call(ops.createNotifier, {
            body: {
              name: spec.name,
              type: spec.type,
              enabled: spec.enabled ?? true,
              config: { ...spec.config, ...spec.secrets } as never,
              ...(spec.titleTemplate ? { titleTemplate: spec.titleTemplate } : {}),
              ...(spec.bodyTemplate ? { bodyTemplate: spec.bodyTemplate } : {}),
            },
          });
          if (made.signingSecret) step.shown = { signingSecret: made.signingSecret };
        },
      };
      upserts.push(step);
      continue;
    }
    const { changes, config } = diff(spec, cur);
    // Secrets alone are sent, not shown as a change: reads never return them to compare (as resources' and routes').
    const shown = changes.filter((c) => c !== 'secrets');
    if (changes.length === 0) continue;
    upserts.push({
      action: 'update',
      kind: 'notifier',
      name: spec.name,
      changes,
      secretsOnly: shown.length === 0,
      run: async () => {
        const body = {
          ...(changes.includes('enabled') ? { enabled: spec.enabled } : {}),
          ...(changes.includes('titleTemplate') ? { titleTemplate: spec.titleTemplate || null } : {}),
          ...(changes.includes('bodyTemplate') ? { bodyTemplate: spec.bodyTemplate || null } : {}),
          ...(Object.keys(config).length ? { config } : {}),
        };
        await c.call(ops.updateNotifier, { params: { id: cur.id }, body: body as never });
      },
    });
  }
  const keep = new Set(specs.map((s) => s.name));
  const deletions: Step[] = prune
    ? current
        .filter((n) => !keep.has(n.name))
        .map((n) => ({
          action: 'delete' as const,
          kind: 'notifier' as const,
          name: n.name,
          run: async () => void (await c.call(ops.deleteNotifier, { params: { id: n.id } })),
        }))
    : [];
  return { upserts, deletions };
}

/** What differs (names for the plan) and the PATCH config that fixes it. */
function diff(spec: NotifierSpec, cur: Notifier): { changes: string[]; config: Record<string, unknown> } {
  const changes: string[] = [];
  const config: Record<string, unknown> = {};
  if (spec.enabled !== undefined && spec.enabled !== cur.enabled) changes.push('enabled');
  // '' and null both mean no template (the daemon stores null).
  for (const key of ['titleTemplate', 'bodyTemplate'] as const)
    if (spec[key] !== undefined && (spec[key] || null) !== (cur[key] ?? null)) changes.push(key);
  const server = cur.config as Record<string, unknown>;
  for (const [key, value] of Object.entries(spec.config)) {
    if (!same(key, value, server[key])) {
      changes.push(key);
      config[key] = value;
    }
  }
  if (spec.secrets.headers) {
    const wanted = new Set(Object.keys(spec.secrets.headers as object).map((h) => h.toLowerCase()));
    const removed = (cur.secrets.headers ?? []).filter((h) => !wanted.has(h.toLowerCase()));
    const added = [...wanted].filter((h) => !(cur.secrets.headers ?? []).some((x) => x.toLowerCase() === h));
    if (removed.length || added.length) changes.push('headers');
    config.headers = { ...Object.fromEntries(removed.map((h) => [h, null])), ...(spec.secrets.headers as object) };
  }
  const secrets = Object.entries(spec.secrets).filter(([k]) => k !== 'headers');
  for (const [key, value] of secrets) config[key] = value;
  if (Object.keys(spec.secrets).length) changes.push('secrets');
  return { changes, config };
}

/** A file value against the daemon's stored form (priorities as numbers, server URLs without a trailing slash). */
function same(key: string, file: unknown, server: unknown): boolean {
  if (key === 'priority') return (typeof file === 'number' ? file : priorityOf(file as string)) === server;
  if (key === 'region') return String(file).toUpperCase() === (server ?? 'US');
  if (key === 'skipTlsVerify') return Boolean(file) === Boolean(server);
  if (key === 'to') return JSON.stringify(file) === JSON.stringify(server);
  if (key === 'url' && typeof file === 'string' && typeof server === 'string')
    return file.replace(/\/+$/, '') === server.replace(/\/+$/, '');
  if (key === 'host' && typeof file === 'string') return file.replace(/^\[(.*)\]$/, '$1') === server;
  return file === server;
}
