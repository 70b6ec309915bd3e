import type { Selectable } from 'kysely';
import type { Notifier, NotifierType } from '../../../src/api/schemas/notifiers.ts';
import { notFound } from '../../../src/errors.ts';
import { formatDateTime } from '../../../src/time.ts';
import type { DaemonContext } from '../../context.ts';
import { boxFor, type SecretBox } from '../../auth/secret-box.ts';
import type { NotifiersTable } from '../../store/schema.ts';
import { NOTIFIER_FIELDS } from '../../../src/notifier-fields.ts';
import type { LoadedNotifier, StoredConfig, StoredSecrets } from './config-types.ts';

/**
 * Notifier rows: the config as JSON, the secrets sealed as one JSON document
 * with the install's secret box under a purpose of their own (a registry
 * password's box cannot open them, nor the other way round).
 */
export function notifierBox(ctx: Pick<DaemonContext, 'installSecret'>): SecretBox {
  return boxFor(ctx.installSecret, 'notifier-secrets');
}

export type NotifierRow = Selectable<NotifiersTable>;

/** The row of notifier `id`; 404 when there is none. */
export async function notifierRow(ctx: Pick<DaemonContext, 'db'>, id: number): Promise<NotifierRow> {
  const row = await ctx.db.selectFrom('notifiers').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound(`Notifier ${id} does not exist`);
  return row;
}

/** The sealed form of the secrets, or null when there are none. */
export function sealSecrets(ctx: Pick<DaemonContext, 'installSecret'>, secrets: StoredSecrets): string | null {
  return Object.keys(secrets).length ? notifierBox(ctx).seal(JSON.stringify(secrets)) : null;
}

/** The secrets, or undefined when the box is not this install's (a database copied without its secret). */
export function openSecrets(ctx: Pick<DaemonContext, 'installSecret'>, sealed: string | null): StoredSecrets | undefined {
  if (sealed === null) return {};
  const text = notifierBox(ctx).open(sealed);
  return text === undefined ? undefined : (JSON.parse(text) as StoredSecrets);
}

/** The API's view: config without secrets, and which secrets are set. */
export function toNotifier(row: NotifierRow, secrets: StoredSecrets | undefined): Notifier {
  const set: Notifier['secrets'] = {};
  if (secrets) {
    for (const key of NOTIFIER_FIELDS[row.type as NotifierType]?.secrets ?? []) {
      const value = (secrets as Record<string, unknown>)[key];
      if (value === undefined) continue;
      if (key === 'headers') set.headers = Object.keys(value as Record<string, string>);
      else (set as Record<string, boolean>)[key] = true;
    }
  }
  return {
    id: row.id,
    name: row.name,
    type: row.type as NotifierType,
    enabled: row.enabled === 1,
    config: JSON.parse(row.config) as StoredConfig,
    secrets: set,
    titleTemplate: row.title_template,
    bodyTemplate: row.body_template,
    createdAt: formatDateTime(row.created_at),
    updatedAt: formatDateTime(row.updated_at),
  };
}

export function loaded(row: NotifierRow, secrets: StoredSecrets): LoadedNotifier {
  return {
    id: row.id,
    name: row.name,
    type: row.type as NotifierType,
    enabled: row.enabled === 1,
    config: JSON.parse(row.config) as StoredConfig,
    secrets,
    titleTemplate: row.title_template,
    bodyTemplate: row.body_template,
  };
}
