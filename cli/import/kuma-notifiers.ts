import { type Draft, envName, notifierName, secret } from './draft.ts';

/**
 * Uptime Kuma's notifications (its backup's `notificationList`: `{id, name, config}`, `config`
 * the provider's form as JSON text) as `notifiers:` entries, for the providers monctl has.
 * Secrets become `${KUMA_<NAME>_<FIELD>}` placeholders; the report lists the variables.
 */
export interface KumaNotification {
  id: number;
  name: string;
  config: string | Record<string, unknown>;
  active?: boolean | number;
}
type Obj = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** The fields of one provider: a function from Kuma's form to monctl's, given a secret maker. */
type Mapper = (c: Obj, hide: (field: string) => string) => Obj | string;

const MAPPERS: Record<string, Mapper> = {
  slack: (_c, hide) => ({ type: 'SLACK', url: hide('url') }),
  discord: (_c, hide) => ({ type: 'DISCORD', url: hide('url') }),
  teams: (_c, hide) => ({ type: 'TEAMS', url: hide('url') }),
  GoogleChat: (_c, hide) => ({ type: 'GOOGLE_CHAT', url: hide('url') }),
  telegram: (c, hide) => ({ type: 'TELEGRAM', token: hide('token'), chatId: String(c.telegramChatID ?? '') }),
  webhook: (c, hide) => {
    const out: Obj = { type: 'WEBHOOK', url: c.webhookURL };
    const extra = str(c.webhookAdditionalHeaders);
    if (extra) {
      try {
        const h = JSON.parse(extra) as Obj;
        out.headers = Object.fromEntries(Object.keys(h).map((k) => [k, hide(`header_${k}`)]));
      } catch {
        return 'its additional headers are not JSON';
      }
    }
    return out;
  },
  smtp: (c, hide) => ({
    type: 'EMAIL',
    host: c.smtpHost,
    port: Number(c.smtpPort) || undefined,
    security: c.smtpSecure ? 'TLS' : 'STARTTLS',
    ...(str(c.smtpUsername) ? { username: c.smtpUsername, password: hide('password') } : {}),
    from: c.smtpFrom,
    to: String(c.smtpTo ?? '')
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean),
    ...(c.smtpIgnoreTLSError ? { skipTlsVerify: true } : {}),
  }),
  ntfy: (c, hide) => {
    if (c.ntfyAuthenticationMethod === 'usernamePassword' || str(c.ntfyusername))
      return 'ntfy with a user name and password: monctl sends a token only';
    return {
      type: 'NTFY',
      url: str(c.ntfyserverurl) ?? 'https://ntfy.sh',
      topic: c.ntfytopic,
      ...(typeof c.ntfyPriority === 'number' ? { priority: c.ntfyPriority } : {}),
      ...(str(c.ntfyaccesstoken) ? { token: hide('token') } : {}),
    };
  },
  PagerDuty: (_c, hide) => ({ type: 'PAGERDUTY', routingKey: hide('routing_key') }),
  Opsgenie: (c, hide) => ({ type: 'OPSGENIE', apiKey: hide('api_key'), region: String(c.opsgenieRegion ?? 'us').toUpperCase() }),
  pushover: (c, hide) => ({
    type: 'PUSHOVER',
    userKey: hide('user_key'),
    token: hide('token'),
    ...(c.pushoverpriority !== undefined && c.pushoverpriority !== '' ? { priority: Number(c.pushoverpriority) } : {}),
  }),
  gotify: (c, hide) => ({
    type: 'GOTIFY',
    url: c.gotifyserverurl,
    token: hide('token'),
    ...(typeof c.gotifyPriority === 'number' ? { priority: c.gotifyPriority } : {}),
  }),
  matrix: (c, hide) => ({ type: 'MATRIX', homeserver: c.homeserverUrl, roomId: c.internalRoomId, token: hide('token') }),
};

/** One notification as a notifier; undefined (and a report line) for a provider monctl lacks. */
export function mapNotification(d: Draft, n: KumaNotification, taken: Set<string>): Obj | undefined {
  let config: Obj;
  try {
    config = typeof n.config === 'string' ? (JSON.parse(n.config) as Obj) : n.config;
  } catch {
    return void d.report.push(`notification ${n.id} "${n.name}": its config is not JSON`);
  }
  const kind = String(config.type ?? '');
  const who = `notification ${n.id} "${n.name}" (${kind})`;
  const mapper = MAPPERS[kind];
  if (!mapper) return void d.report.push(`${who}: monctl has no ${kind} notifier`);
  let name = notifierName(n.name);
  if (taken.has(name)) name = `${name.slice(0, 58)}-${n.id}`;
  const hide = (field: string) => secret(d, envName('KUMA', name, field), `${field.replace(/_/g, ' ')} of notifier ${name}`);
  const mapped = mapper(config, hide);
  if (typeof mapped === 'string') return void d.report.push(`${who}: ${mapped}`);
  taken.add(name);
  // Kuma's webhook posts JSON, form data, or a custom body template (webhookContentType json, form-data, custom).
  if (kind === 'webhook' && (config.webhookContentType === 'custom' || config.webhookContentType === 'form-data'))
    d.report.push(`${who}: its ${config.webhookContentType} body left out: monctl's webhook sends its own JSON`);
  const out: Obj = { name, ...Object.fromEntries(Object.entries(mapped).filter(([, v]) => v !== undefined)) };
  if (n.active === false || n.active === 0) out.enabled = false;
  return out;
}
