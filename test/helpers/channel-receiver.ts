import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * One loopback server standing in for every provider of the channel types with a module of their
 * own, for the exactly-once tests and bench:alerts: each type is pointed at its own path prefix,
 * and the server records each request under it and answers with a body every channel reads as
 * accepted (Telegram's `ok`, Pushover's `status: 1`, Matrix's `event_id`). What each provider
 * checks is tested in the channels' own files (test/notifiers, test/channels); this one counts.
 */
export const CHANNEL_TYPES = [
  'DISCORD',
  'TEAMS',
  'GOOGLE_CHAT',
  'TELEGRAM',
  'PUSHOVER',
  'GOTIFY',
  'PAGERDUTY',
  'OPSGENIE',
  'MATRIX',
] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

/** A config of each type that sends to `url`, under the type's own path prefix (`/discord/…`). */
export function channelConfig(type: ChannelType, url: string): Record<string, unknown> {
  const at = `${url}/${type.toLowerCase()}`;
  switch (type) {
    case 'DISCORD':
      return { url: `${at}/api/webhooks/1/token` };
    case 'TEAMS':
      return { url: `${at}/workflows/trigger` };
    case 'GOOGLE_CHAT':
      return { url: `${at}/v1/spaces/AAAA/messages?key=k&token=t` };
    case 'TELEGRAM':
      return { token: '123456:ABC-race', chatId: '-1001', apiUrl: at };
    case 'PUSHOVER':
      return { userKey: 'u'.repeat(30), token: 'a'.repeat(30), apiUrl: at };
    case 'GOTIFY':
      return { url: at, token: 'gotify-app-token' };
    case 'PAGERDUTY':
      return { routingKey: 'R'.repeat(32), apiUrl: at };
    case 'OPSGENIE':
      return { apiKey: 'genie-key', apiUrl: at };
    case 'MATRIX':
      return { homeserver: at, token: 'syt_race', roomId: '!race:example.org' };
  }
}

export interface ChannelRequest {
  /** The type, from the path prefix. */
  type: ChannelType;
  at: number;
  path: string;
  body: string;
}

export interface ChannelReceiver {
  url: string;
  requests: ChannelRequest[];
  /**
   * Per type, how many requests named each subject: names are `pattern`'s matches in a body (a
   * name made of letters and digits survives every channel's escaping), each counted once per request.
   */
  named(pattern: RegExp): Map<ChannelType, Map<string, number>>;
  close(): Promise<void>;
}

const ACCEPTED = JSON.stringify({ ok: true, result: { message_id: 1 }, status: 1, request: 'r', event_id: '$e:example.org', id: 1 });

export async function startChannelReceiver(): Promise<ChannelReceiver> {
  const requests: ChannelRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const prefix = (req.url ?? '').split('/')[1]?.toUpperCase();
      const type = CHANNEL_TYPES.find((t) => t === prefix);
      if (!type) return void res.writeHead(404).end();
      requests.push({ type, at: Date.now(), path: req.url ?? '', body: Buffer.concat(chunks).toString() });
      res.writeHead(200, { 'content-type': 'application/json' }).end(ACCEPTED);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    named(pattern) {
      const out = new Map<ChannelType, Map<string, number>>(CHANNEL_TYPES.map((t) => [t, new Map()]));
      for (const r of requests) {
        const counts = out.get(r.type)!;
        for (const name of new Set(r.body.match(new RegExp(pattern, 'g')) ?? [])) counts.set(name, (counts.get(name) ?? 0) + 1);
      }
      return out;
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
