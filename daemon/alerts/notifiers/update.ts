import type { Static } from '@sinclair/typebox';
import type { NotifierPatch, NotifierType } from '../../../src/api/schemas/notifiers.ts';
import { badRequest, type FieldError } from '../../../src/errors.ts';
import type { StoredConfig, StoredSecrets } from './config-types.ts';
import { DEFAULT_PORTS, DESTINATION_FIELDS, NOTIFIER_FIELDS } from '../../../src/notifier-fields.ts';
import { type FlatConfig, normalise } from './validate.ts';

type ConfigPatch = NonNullable<Static<typeof NotifierPatch>['config']>;

/**
 * A PATCH of a notifier's config: a JSON merge patch over the stored config and
 * secrets (null removes a field; `headers` merges by name, case-insensitively),
 * then the same checks as a create. A secret the patch leaves out is kept,
 * unless the destination changes: a stored secret is never sent to a new URL
 * or SMTP server without being given again.
 */
export function applyPatch(
  type: NotifierType,
  config: StoredConfig,
  secrets: StoredSecrets,
  patch: ConfigPatch,
): { config: StoredConfig; secrets: StoredSecrets } {
  const { origin: _derived, ...kept } = config;
  const flat: Record<string, unknown> = { ...kept, ...secrets };
  // A default port follows the security it was the default of.
  if (type === 'EMAIL' && patch.security && patch.port === undefined && config.security && config.port === DEFAULT_PORTS[config.security]) {
    delete flat.port;
  }
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (key === 'headers' && value !== null) {
      const headers = { ...(flat.headers as Record<string, string> | undefined) };
      for (const [name, v] of Object.entries(value as Record<string, string | null>)) {
        for (const existing of Object.keys(headers)) if (existing.toLowerCase() === name.toLowerCase()) delete headers[existing];
        if (v !== null) headers[name] = v;
      }
      flat.headers = headers;
    } else if (value === null) delete flat[key];
    else flat[key] = value;
  }
  if (type === 'WEBHOOK' && flat.signingSecret === undefined) {
    throw badRequest('Invalid notifier: config.signingSecret: cannot be removed (rotate it instead)', [
      { field: 'config.signingSecret', message: 'cannot be removed (rotate it instead)' },
    ]);
  }
  const next = normalise(type, flat as FlatConfig);
  const errors = resentSecrets(type, config, next, patch);
  if (errors.length) throw badRequest(`Invalid notifier: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`, errors);
  return next;
}

/** The secrets that must be given again because the destination they are sent to changed. */
function resentSecrets(
  type: NotifierType,
  before: StoredConfig,
  after: { config: StoredConfig; secrets: StoredSecrets },
  patch: ConfigPatch,
): FieldError[] {
  const errors: FieldError[] = [];
  const why = (what: string) => `give it again: the destination changed, and a stored ${what} is not sent to a new one`;
  if (type === 'WEBHOOK' && before.url !== after.config.url) {
    const given = new Set(Object.keys(patch.headers ?? {}).map((h) => h.toLowerCase()));
    for (const name of Object.keys(after.secrets.headers ?? {})) {
      if (!given.has(name.toLowerCase())) errors.push({ field: `config.headers.${name}`, message: why('header value') });
    }
  }
  if (type === 'NTFY' && before.url !== after.config.url && after.secrets.token !== undefined && patch.token === undefined) {
    errors.push({ field: 'config.token', message: why('token') });
  }
  // The channel types: a changed destination field asks again for every stored secret the patch leaves out.
  const destination = DESTINATION_FIELDS[type] ?? [];
  const moved = destination.some((key) => (before as Record<string, unknown>)[key] !== (after.config as Record<string, unknown>)[key]);
  if (moved) {
    for (const key of NOTIFIER_FIELDS[type].secrets) {
      const given = (patch as Record<string, unknown>)[key];
      if ((after.secrets as Record<string, unknown>)[key] !== undefined && (given === undefined || given === null)) {
        errors.push({ field: `config.${key}`, message: why(key) });
      }
    }
  }
  if (
    type === 'EMAIL' &&
    (before.host !== after.config.host || before.port !== after.config.port) &&
    after.secrets.password !== undefined &&
    patch.password === undefined
  ) {
    errors.push({ field: 'config.password', message: why('password') });
  }
  return errors;
}
