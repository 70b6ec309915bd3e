import type { CliClient } from '../api/client.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import { didYouMean, fieldNames } from './fields.ts';
import type { Step } from './step.ts';

/**
 * Status pages in `monctl apply -f` files, matched by slug. Groups are named
 * (the file's or the server's); fields left out are not managed.
 */
export interface StatusPageSpec {
  slug: string;
  title: string;
  description?: string | null;
  groups?: string[];
  showAnnouncements?: boolean;
  showIncidents?: boolean;
  showErrorDetails?: boolean;
  customHostname?: string | null;
  httpsRedirect?: boolean;
  footer?: string | null;
  subscriptions?: boolean;
  /** The EMAIL notifier that sends subscriber mail, by name; null: none. */
  emailNotifier?: string | null;
}

type Obj = Record<string, unknown>;
const FIELDS = fieldNames('statusPages');
const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

/** Validates `statusPages[i]` entries, reporting every problem through `err`. */
export function validateStatusPages(items: Obj[], err: (path: string, msg: string) => void): StatusPageSpec[] {
  return items.map((p, i) => {
    const at = `statusPages[${i}]`;
    for (const k of Object.keys(p)) if (!FIELDS.includes(k)) err(`${at}.${k}`, `unknown field${didYouMean(k, FIELDS)}`);
    const text = (k: string, required: boolean, nullable: boolean): string | null | undefined => {
      const v = p[k];
      if (v === undefined || (v === null && !nullable)) {
        if (required) err(`${at}.${k}`, 'is required');
        return undefined;
      }
      if (v === null) return null;
      if (typeof v !== 'string' || v.trim() === '') err(`${at}.${k}`, 'must be a non-empty string');
      return v as string;
    };
    const flag = (k: string): boolean | undefined => {
      if (p[k] !== undefined && typeof p[k] !== 'boolean') err(`${at}.${k}`, 'must be true or false');
      return p[k] as boolean | undefined;
    };
    const slug = text('slug', true, false) as string | undefined;
    if (slug && !SLUG.test(slug)) err(`${at}.slug`, 'must be 1 to 64 of a-z, 0-9 and -, not starting or ending with -');
    let groups: string[] | undefined;
    if (p.groups !== undefined) {
      if (!Array.isArray(p.groups) || p.groups.some((g) => typeof g !== 'string')) err(`${at}.groups`, 'must be a list of group names');
      else groups = p.groups as string[];
    }
    return {
      slug: slug!,
      title: text('title', true, false) as string,
      description: text('description', false, true),
      groups,
      showAnnouncements: flag('showAnnouncements'),
      showIncidents: flag('showIncidents'),
      showErrorDetails: flag('showErrorDetails'),
      customHostname: text('customHostname', false, true),
      httpsRedirect: flag('httpsRedirect'),
      footer: text('footer', false, true),
      subscriptions: flag('subscriptions'),
      emailNotifier: text('emailNotifier', false, true),
    };
  });
}

/** The steps that make the server's status pages match the file (and, with prune, delete the others). */
export async function planStatusPages(
  c: CliClient,
  specs: StatusPageSpec[],
  groupIds: Map<string, number>,
  prune: boolean,
): Promise<Step[]> {
  const current = await c.call(ops.listStatusPages);
  const steps: Step[] = [];
  // Notifiers by id, for the diff; at run time by name, since the file may create the notifier it names.
  const notifierNames = specs.some((s) => s.emailNotifier !== undefined)
    ? new Map((await c.call(ops.listNotifiers)).map((n) => [n.id, n.name]))
    : new Map<number, string>();
  const notifierId = async (name: string) => {
    const found = (await c.call(ops.listNotifiers)).find((n) => n.name === name);
    if (!found) throw new MonctlError('not-found', `status page: no notifier named "${name}"`, ExitCode.notFound);
    return found.id;
  };
  for (const s of specs) {
    const cur = current.find((x) => x.slug === s.slug);
    // Group ids are looked up when the step runs: groups the file creates exist by then.
    const body = async () => {
      const out: Record<string, unknown> = { title: s.title };
      for (const k of [
        'description',
        'showAnnouncements',
        'showIncidents',
        'showErrorDetails',
        'customHostname',
        'httpsRedirect',
        'footer',
        'subscriptions',
      ] as const)
        if (s[k] !== undefined) out[k] = s[k];
      if (s.groups) out.groupIds = s.groups.map((g) => groupIds.get(g)!);
      if (s.emailNotifier !== undefined) out.emailNotifierId = s.emailNotifier === null ? null : await notifierId(s.emailNotifier);
      return out;
    };
    if (!cur) {
      steps.push({
        action: 'create',
        kind: 'status page',
        name: s.slug,
        run: async () => {
          await c.call(ops.createStatusPage, { body: { slug: s.slug, ...(await body()) } as never });
        },
      });
      continue;
    }
    const names = new Map([...groupIds].map(([name, id]) => [id, name]));
    const changes: string[] = [];
    if (s.title !== cur.title) changes.push('title');
    for (const k of [
      'description',
      'showAnnouncements',
      'showIncidents',
      'showErrorDetails',
      'customHostname',
      'httpsRedirect',
      'footer',
      'subscriptions',
    ] as const) {
      const want = k === 'customHostname' && typeof s[k] === 'string' ? (s[k] as string).toLowerCase().replace(/\.$/, '') : s[k];
      if (want !== undefined && want !== cur[k]) changes.push(k);
    }
    const curNotifier = cur.emailNotifierId === null ? null : (notifierNames.get(cur.emailNotifierId) ?? `#${cur.emailNotifierId}`);
    if (s.emailNotifier !== undefined && s.emailNotifier !== curNotifier) changes.push('emailNotifier');
    if (s.groups && s.groups.join('\n') !== cur.groupIds.map((id) => names.get(id) ?? `#${id}`).join('\n')) changes.push('groups');
    if (changes.length) {
      steps.push({
        action: 'update',
        kind: 'status page',
        name: s.slug,
        changes,
        run: async () => {
          await c.call(ops.updateStatusPage, { params: { id: cur.id }, body: (await body()) as never });
        },
      });
    }
  }
  if (prune) {
    const keep = new Set(specs.map((s) => s.slug));
    for (const p of current)
      if (!keep.has(p.slug)) {
        steps.push({
          action: 'delete',
          kind: 'status page',
          name: p.slug,
          run: async () => void (await c.call(ops.deleteStatusPage, { params: { id: p.id } })),
        });
      }
  }
  return steps;
}
