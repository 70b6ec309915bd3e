import { type Answer, type Received, type Receiver, startReceiver } from './receivers.ts';

/**
 * Receivers on 127.0.0.1 for the chat channels, each written from its provider's public API
 * documentation: what it checks (method, path, query, content type, the payload's schema) and
 * how it answers (its success and its error shapes, 429 with its wait).
 * - Discord: "Execute Webhook" https://discord.com/developers/docs/resources/webhook#execute-webhook,
 *   the embed limits https://discord.com/developers/docs/resources/message#embed-object-embed-limits,
 *   "Rate Limits" https://discord.com/developers/docs/topics/rate-limits (429: `Retry-After` and a JSON
 *   body `{message, retry_after, global}`), errors `{code, message}` https://discord.com/developers/docs/topics/opcodes-and-status-codes#json.
 * - Teams: "Create incoming webhooks with Workflows for Microsoft Teams"
 *   https://support.microsoft.com/en-us/office/create-incoming-webhooks-with-workflows-for-microsoft-teams-8ae491c7-0394-4861-ba59-055e33f75498
 *   (the "Post to a channel when a webhook request is received" template: a message with an Adaptive
 *   Card attachment, 202 Accepted) and the Adaptive Cards schema https://adaptivecards.io/explorer/
 *   (AdaptiveCard, TextBlock, FactSet, Action.OpenUrl); Logic Apps errors `{error: {code, message}}`.
 * - Google Chat: "Send messages to Google Chat with incoming webhooks"
 *   https://developers.google.com/workspace/chat/quickstart/webhooks (POST
 *   /v1/spaces/SPACE/messages?key=…&token=…, a Message, answered with the created Message) and
 *   Google's error model https://cloud.google.com/apis/design/errors (`{error: {code, message, status}}`).
 */
export interface ChatReceiver extends Receiver {
  /** The webhook URL to configure. */
  hook: string;
  /** The payloads accepted, parsed. */
  accepted: any[];
  /** When each request arrived (epoch ms), in the order of `received`. */
  times: number[];
  /** Answers the next valid requests with these (after checking them), then with success. */
  answerNext(...answers: Answer[]): void;
}

type Check = (r: Received, url: URL, payload: any) => Answer | undefined;
const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => ({
  status,
  body: JSON.stringify(body),
  headers: { 'content-type': 'application/json', ...headers },
});

async function startChatReceiver(path: string, check: Check, success: (payload: any, url: URL) => Answer): Promise<ChatReceiver> {
  const accepted: any[] = [];
  const times: number[] = [];
  const next: Answer[] = [];
  const receiver = await startReceiver((r) => {
    times.push(Date.now());
    const url = new URL(r.path, 'http://receiver');
    let payload: any;
    try {
      payload = JSON.parse(r.body);
    } catch {
      payload = undefined;
    }
    const refused = check(r, url, payload);
    if (refused) return refused;
    if (next.length) return next.shift()!;
    accepted.push(payload);
    return success(payload, url);
  });
  return Object.assign(receiver, { hook: `${receiver.url}${path}`, accepted, times, answerNext: (...a: Answer[]) => next.push(...a) });
}

const isString = (v: unknown, max: number) => typeof v === 'string' && v.length > 0 && v.length <= max;
const isUrl = (v: unknown) => typeof v === 'string' && /^https?:\/\/\S+$/.test(v);

/** A Discord channel webhook `/api/webhooks/{id}/{token}`. */
export function startDiscordReceiver(id: string, token: string): Promise<ChatReceiver> {
  const invalid = (errors: string[]) => json(400, { code: 50035, message: 'Invalid Form Body', errors });
  return startChatReceiver(
    `/api/webhooks/${id}/${token}`,
    (r, url, p) => {
      const m = /^\/api\/webhooks\/(\d+)\/([^/]+)$/.exec(url.pathname);
      if (r.method !== 'POST' || !m || m[1] !== id) return json(404, { message: 'Unknown Webhook', code: 10015 });
      if (m[2] !== token) return json(401, { message: 'Invalid Webhook Token', code: 50027 });
      if (!/^application\/json/.test(String(r.headers['content-type'])))
        return json(400, { message: 'Cannot send an empty message', code: 50006 });
      const wait = url.searchParams.get('wait');
      if (wait !== null && wait !== 'true' && wait !== 'false') return invalid(['wait: must be a boolean']);
      if (!p || (p.content === undefined && p.embeds === undefined))
        return json(400, { message: 'Cannot send an empty message', code: 50006 });
      const errors: string[] = [];
      if (p.username !== undefined && (!isString(p.username, 80) || /discord|clyde/i.test(p.username))) errors.push('username');
      const mentions = p.allowed_mentions;
      if (
        mentions !== undefined &&
        !(Array.isArray(mentions.parse) && mentions.parse.every((x: string) => ['roles', 'users', 'everyone'].includes(x)))
      )
        errors.push('allowed_mentions.parse');
      if (!Array.isArray(p.embeds) || p.embeds.length > 10) errors.push('embeds');
      let total = 0;
      for (const [i, e] of (Array.isArray(p.embeds) ? p.embeds : []).entries()) {
        if (e.title !== undefined && !isString(e.title, 256)) errors.push(`embeds.${i}.title`);
        if (e.description !== undefined && !isString(e.description, 4096)) errors.push(`embeds.${i}.description`);
        if (e.url !== undefined && !isUrl(e.url)) errors.push(`embeds.${i}.url`);
        if (e.color !== undefined && !(Number.isInteger(e.color) && e.color >= 0 && e.color <= 0xffffff)) errors.push(`embeds.${i}.color`);
        if (e.timestamp !== undefined && Number.isNaN(Date.parse(e.timestamp))) errors.push(`embeds.${i}.timestamp`);
        if (e.footer !== undefined && !isString(e.footer.text, 2048)) errors.push(`embeds.${i}.footer.text`);
        const fields = e.fields ?? [];
        if (!Array.isArray(fields) || fields.length > 25) errors.push(`embeds.${i}.fields`);
        for (const f of fields) if (!isString(f.name, 256) || !isString(f.value, 1024)) errors.push(`embeds.${i}.fields`);
        total += [e.title, e.description, e.footer?.text, ...fields.flatMap((f: any) => [f.name, f.value])].join('').length;
      }
      if (total > 6000) errors.push('embeds: more than 6000 characters');
      return errors.length ? invalid(errors) : undefined;
    },
    (p, url) =>
      url.searchParams.get('wait') === 'true'
        ? json(200, {
            id: '1180000000000000001',
            type: 0,
            content: p.content ?? '',
            channel_id: '1180000000000000002',
            author: { bot: true, id, username: p.username ?? 'Captain Hook' },
            embeds: p.embeds,
            mentions: [],
            mention_everyone: false,
            timestamp: new Date().toISOString(),
            webhook_id: id,
          })
        : { status: 204 },
  );
}

/** Discord's 429 (a shared or per-route limit): `retry_after` in seconds in the body, maybe a `Retry-After` header. */
export const discordRateLimited = (seconds: number, header = true): Answer =>
  json(
    429,
    { message: 'You are being rate limited.', retry_after: seconds, global: false },
    header ? { 'retry-after': String(Math.ceil(seconds)) } : {},
  );

const TEXT_WEIGHTS = ['Default', 'Lighter', 'Bolder'];
const TEXT_SIZES = ['Default', 'Small', 'Medium', 'Large', 'ExtraLarge'];
const COLOURS = ['Default', 'Dark', 'Light', 'Accent', 'Good', 'Warning', 'Attention'];

/** A Workflows webhook trigger `/workflows/{id}/triggers/manual/paths/invoke?api-version=…&sp=…&sv=1.0&sig=…`. */
export function startTeamsReceiver(workflow: string, sig: string): Promise<ChatReceiver> {
  const error = (status: number, code: string, message: string, headers?: Record<string, string>) =>
    json(status, { error: { code, message } }, headers);
  const query = `api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=${sig}`;
  return startChatReceiver(
    `/workflows/${workflow}/triggers/manual/paths/invoke?${query}`,
    (r, url, p) => {
      if (r.method !== 'POST' || url.pathname !== `/workflows/${workflow}/triggers/manual/paths/invoke`)
        return error(404, 'WorkflowNotFound', `The workflow '${workflow}' could not be found.`);
      if (url.searchParams.get('sig') !== sig || url.searchParams.get('sp') !== '/triggers/manual/run')
        return error(401, 'DirectApiAuthorizationRequired', 'The request must be authenticated only by Shared Access scheme.');
      if (!url.searchParams.get('api-version'))
        return error(400, 'MissingApiVersionParameter', 'The api-version query parameter is required.');
      const problem = adaptiveMessageProblem(p);
      return problem ? error(400, 'InvalidTemplate', problem) : undefined;
    },
    () => ({ status: 202 }),
  );
}

/** What the Workflows template reads: `{type: "message", attachments: [{contentType, content: AdaptiveCard}]}`. */
function adaptiveMessageProblem(p: any): string | undefined {
  if (p?.type !== 'message' || !Array.isArray(p.attachments) || p.attachments.length === 0)
    return 'the body must be a message with attachments';
  for (const a of p.attachments) {
    if (a.contentType !== 'application/vnd.microsoft.card.adaptive') return `contentType ${a.contentType} is not an Adaptive Card`;
    const c = a.content;
    if (c?.type !== 'AdaptiveCard') return 'content.type must be AdaptiveCard';
    if (typeof c.version !== 'string' || !/^1\.[4-6]$/.test(c.version)) return 'content.version must be 1.4 to 1.6 (what Teams renders)';
    if (!Array.isArray(c.body)) return 'content.body must be an array';
    for (const el of c.body) {
      if (el.type === 'TextBlock') {
        if (typeof el.text !== 'string') return 'TextBlock.text is required';
        if (el.weight !== undefined && !TEXT_WEIGHTS.includes(el.weight)) return `TextBlock.weight ${el.weight}`;
        if (el.size !== undefined && !TEXT_SIZES.includes(el.size)) return `TextBlock.size ${el.size}`;
        if (el.color !== undefined && !COLOURS.includes(el.color)) return `TextBlock.color ${el.color}`;
        if (el.wrap !== undefined && typeof el.wrap !== 'boolean') return 'TextBlock.wrap must be a boolean';
      } else if (el.type === 'FactSet') {
        if (!Array.isArray(el.facts) || !el.facts.every((f: any) => typeof f.title === 'string' && typeof f.value === 'string'))
          return 'FactSet.facts must be {title, value} strings';
      } else return `element type ${el.type} is not expected here`;
    }
    for (const action of c.actions ?? []) {
      if (action.type !== 'Action.OpenUrl' || !isUrl(action.url)) return 'actions must be Action.OpenUrl with a url';
    }
  }
  return undefined;
}

/** A Google Chat space webhook `/v1/spaces/{space}/messages?key=…&token=…`. */
export function startGoogleChatReceiver(space: string, key: string, token: string): Promise<ChatReceiver> {
  const error = (code: number, status: string, message: string) => json(code, { error: { code, message, status } });
  return startChatReceiver(
    `/v1/spaces/${space}/messages?key=${key}&token=${token}`,
    (r, url, p) => {
      if (r.method !== 'POST' || url.pathname !== `/v1/spaces/${space}/messages`)
        return error(404, 'NOT_FOUND', 'Requested entity was not found.');
      if (url.searchParams.get('key') !== key) return error(403, 'PERMISSION_DENIED', 'The request is missing a valid API key.');
      if (url.searchParams.get('token') !== token) return error(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.');
      if (!/^application\/json/.test(String(r.headers['content-type'])))
        return error(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
      if (!p || typeof p !== 'object') return error(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
      const unknown = Object.keys(p).filter((k) => !['text', 'cardsV2', 'thread', 'accessoryWidgets', 'privateMessageViewer'].includes(k));
      if (unknown.length)
        return error(
          400,
          'INVALID_ARGUMENT',
          `Invalid JSON payload received. Unknown name "${unknown[0]}" at 'message': Cannot find field.`,
        );
      if (typeof p.text !== 'string' && p.cardsV2 === undefined) return error(400, 'INVALID_ARGUMENT', 'Message cannot be empty.');
      if (typeof p.text === 'string' && p.text.length > 4096) return error(400, 'INVALID_ARGUMENT', 'Message text is too long.');
      return undefined;
    },
    (p) =>
      json(200, {
        name: `spaces/${space}/messages/m1.m1`,
        sender: { name: 'users/114022495153014004089', displayName: 'monctl', type: 'BOT' },
        text: p.text,
        thread: { name: `spaces/${space}/threads/t1` },
        space: { name: `spaces/${space}`, type: 'ROOM' },
        createTime: new Date().toISOString(),
      }),
  );
}

/**
 * The characters of `text` that its markup would read, outside http(s) URLs and outside backslash
 * escapes (`\*`): none when plain text was escaped right.
 */
export function bareMarkup(text: string, specials: RegExp, backslashEscapes = true): string[] {
  // A URL ends before a parenthesis: `(https://x/y)` leaves `(` and `)` to check.
  const outsideUrls = text.replace(/\bhttps?:\/\/[^\s<>"()]+/g, '');
  return (backslashEscapes ? outsideUrls.replace(/\\[!-/:-@[-`{-~]/g, '') : outsideUrls).match(specials) ?? [];
}

/** CommonMark's (and Discord's) backslash escapes undone: what the reader sees. */
export const unescapeMarkdown = (text: string) => text.replace(/\\([!-/:-@[-`{-~])/g, '$1');
