import type { Notifier } from '../../src/api/schemas/notifiers.ts';
import { NOTIFIER_FIELDS } from '../../src/notifier-fields.ts';
import type { Placeholders } from './secrets.ts';
import { sortedKeys } from './resources.ts';

type Obj = Record<string, unknown>;

/**
 * One `notifiers:` entry: flat fields as the API's config names them (cli/apply/notifiers-spec.ts).
 * A secret the daemon says is set becomes a placeholder; one that is not set is left out (a WEBHOOK
 * without signingSecret gets a new one from the daemon it is applied to).
 */
export function notifierEntry(n: Notifier, env: Placeholders): Obj {
  const fields = NOTIFIER_FIELDS[n.type];
  const out: Obj = { name: n.name, type: n.type, enabled: n.enabled };
  const config = n.config as Obj;
  const set = n.secrets as Obj;
  for (const key of fields.fields) {
    if (key === 'headers') {
      const headers = (n.secrets.headers ?? []).slice().sort();
      if (headers.length) out.headers = sortedKeys(Object.fromEntries(headers.map((h) => [h, env.ref('NOTIFIER', n.name, 'HEADER', h)])));
    } else if (fields.secrets.includes(key)) {
      if (set[key]) out[key] = env.ref('NOTIFIER', n.name, key.replace(/([a-z])([A-Z])/g, '$1_$2'));
    } else if (config[key] !== undefined && config[key] !== null) out[key] = config[key];
  }
  if (n.titleTemplate) out.titleTemplate = n.titleTemplate;
  if (n.bodyTemplate) out.bodyTemplate = n.bodyTemplate;
  return out;
}
