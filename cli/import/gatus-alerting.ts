import { type Draft, envName, secret } from './draft.ts';

/**
 * Gatus's `alerting:` providers as `notifiers:` entries named `gatus-<provider>`, for the ones
 * monctl has. Secrets (webhook URLs of chat services, tokens, keys, passwords) become
 * `${GATUS_<PROVIDER>_<FIELD>}` placeholders.
 */
type Obj = Record<string, unknown>;
type Mapper = (c: Obj, hide: (field: string) => string) => Obj | string;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

const hostOf = (url: unknown): string => {
  try {
    return new URL(String(url)).hostname;
  } catch {
    return '';
  }
};
const webhook = (type: string) => (_c: Obj, hide: (field: string) => string) => ({ type, url: hide('webhook_url') });

export const PROVIDERS: Record<string, Mapper> = {
  slack: webhook('SLACK'),
  discord: webhook('DISCORD'),
  // Gatus's `teams` posts to an Office 365 connector, which Microsoft retired (monctl refuses those URLs).
  teams: (c, hide) =>
    /(^|\.)(webhook\.office\.com|outlook\.office\.com)$/i.test(hostOf(c['webhook-url']))
      ? 'an Office 365 connector, which Microsoft retired: create a Workflows webhook in the channel (teams-workflows)'
      : webhook('TEAMS')(c, hide),
  'teams-workflows': webhook('TEAMS'),
  googlechat: webhook('GOOGLE_CHAT'),
  custom: (c, hide) => {
    if (!str(c.url)) return 'no url';
    const headers = c.headers && typeof c.headers === 'object' ? (c.headers as Obj) : {};
    return {
      type: 'WEBHOOK',
      url: c.url,
      ...(Object.keys(headers).length ? { headers: Object.fromEntries(Object.keys(headers).map((h) => [h, hide(`header_${h}`)])) } : {}),
    };
  },
  email: (c, hide) => ({
    type: 'EMAIL',
    host: c.host,
    port: c.port,
    ...(str(c.username) ? { username: c.username } : {}),
    ...(str(c.password) ? { password: hide('password') } : {}),
    from: c.from,
    to: String(c.to ?? '')
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean),
    ...((c.client as Obj | undefined)?.insecure ? { skipTlsVerify: true } : {}),
  }),
  pagerduty: (_c, hide) => ({ type: 'PAGERDUTY', routingKey: hide('integration_key') }),
  opsgenie: (_c, hide) => ({ type: 'OPSGENIE', apiKey: hide('api_key') }),
  ntfy: (c, hide) => ({
    type: 'NTFY',
    url: str(c.url) ?? 'https://ntfy.sh',
    topic: c.topic,
    ...(typeof c.priority === 'number' ? { priority: c.priority } : {}),
    ...(str(c.token) ? { token: hide('token') } : {}),
  }),
  telegram: (c, hide) => ({
    type: 'TELEGRAM',
    token: hide('token'),
    chatId: String(c.id ?? ''),
    ...(str(c['api-url']) ? { apiUrl: c['api-url'] } : {}),
  }),
  gotify: (c, hide) => ({
    type: 'GOTIFY',
    url: c['server-url'],
    token: hide('token'),
    ...(typeof c.priority === 'number' ? { priority: c.priority } : {}),
  }),
  matrix: (c, hide) => ({
    type: 'MATRIX',
    homeserver: str(c['server-url']) ?? 'https://matrix-client.matrix.org',
    roomId: c['internal-room-id'],
    token: hide('access_token'),
  }),
  pushover: (c, hide) => ({
    type: 'PUSHOVER',
    userKey: hide('user_key'),
    token: hide('application_token'),
    ...(typeof c.priority === 'number' ? { priority: c.priority } : {}),
  }),
};

/** Each provider as a notifier: provider name → notifier name, for the endpoints' alerts. */
export function mapAlerting(d: Draft, alerting: Obj): Map<string, string> {
  const out = new Map<string, string>();
  for (const [provider, raw] of Object.entries(alerting)) {
    const mapper = PROVIDERS[provider];
    if (!mapper) {
      d.report.push(`alerting provider ${provider}: monctl has no ${provider} notifier`);
      continue;
    }
    const name = `gatus-${provider}`;
    const c = raw && typeof raw === 'object' ? (raw as Obj) : {};
    const mapped = mapper(c, (field) => secret(d, envName('GATUS', provider, field), `${field.replace(/_/g, ' ')} of notifier ${name}`));
    if (typeof mapped === 'string') {
      d.report.push(`alerting provider ${provider}: ${mapped}`);
      continue;
    }
    const overrides = Array.isArray(c.overrides) ? (c.overrides as Obj[]).map((o) => String(o?.group)) : [];
    if (overrides.length)
      d.report.push(`alerting provider ${provider}: its overrides for groups ${overrides.join(', ')} left out: one notifier per provider`);
    if (provider === 'custom' && (c.body !== undefined || c.placeholders !== undefined))
      d.report.push(`alerting provider custom: its body template left out: monctl's webhook sends its own JSON`);
    d.notifiers.push({ name, ...Object.fromEntries(Object.entries(mapped).filter(([, v]) => v !== undefined)) });
    out.set(provider, name);
  }
  return out;
}
