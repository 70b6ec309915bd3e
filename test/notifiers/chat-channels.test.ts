import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discordBody } from '../../daemon/alerts/notifiers/channels/discord.ts';
import { googleChatBody } from '../../daemon/alerts/notifiers/channels/google-chat.ts';
import type { RenderedMessage } from '../../daemon/alerts/notifiers/render.ts';
import { type AlertWorld, eventually, startAlertWorld } from '../alerts/world.ts';
import {
  bareMarkup,
  type ChatReceiver,
  discordRateLimited,
  startDiscordReceiver,
  startGoogleChatReceiver,
  startTeamsReceiver,
  unescapeMarkdown,
} from './chat-receivers.ts';

/**
 * DISCORD, TEAMS and GOOGLE_CHAT against receivers on loopback written from each provider's
 * documentation (the pages are cited in chat-receivers.ts: Discord "Execute Webhook" and "Rate
 * Limits", Teams "Create incoming webhooks with Workflows" and the Adaptive Cards schema, Google
 * Chat "Send messages to Google Chat with incoming webhooks"), through one daemon: secrets never
 * read back, test messages, an incident opening and resolving on a resource whose name carries
 * Markdown, HTML and mention syntax, 429s retried no sooner than asked, refusals not retried.
 */
const NAME = 'db_*[prod]*<b>&amp;`(1) @everyone <users/all>';
const PUBLIC_URL = 'https://monctl.example.test';
let w: AlertWorld;
let discord: ChatReceiver;
let teams: ChatReceiver;
let chat: ChatReceiver;
const ids: Record<string, number> = {};

beforeAll(async () => {
  w = await startAlertWorld({ args: ['--public-url', PUBLIC_URL] });
  [discord, teams, chat] = await Promise.all([
    startDiscordReceiver('1180000000000000042', 'tok-Discord_secret'),
    startTeamsReceiver('0f3c1d2e', 'sig-Teams-secret'),
    startGoogleChatReceiver('AAAAx1', 'key-Chat-secret', 'tok-Chat-secret'),
  ]);
  for (const [type, r] of [
    ['DISCORD', discord],
    ['TEAMS', teams],
    ['GOOGLE_CHAT', chat],
  ] as const)
    ids[type] = (await w.notifier(`chat-${type.toLowerCase()}`, type, { url: r.hook })).id;
});
afterAll(async () => {
  await Promise.all([discord, teams, chat].map((r) => r?.close()));
  await w.target.close();
  await w.d.stop();
});

const deliveries = (type: string) =>
  w.call<Array<{ attempt: number; ok: boolean; statusCode: number }>>('GET', `/admin/api/notifiers/${ids[type]}/deliveries`);

describe('configuration', () => {
  it('keeps each webhook URL sealed: reads show secrets.url and the origin, never the URL', async () => {
    for (const [type, r] of [
      ['DISCORD', discord],
      ['TEAMS', teams],
      ['GOOGLE_CHAT', chat],
    ] as const) {
      const one = await w.call('GET', `/admin/api/notifiers/${ids[type]}`);
      expect(one).toMatchObject({ type, secrets: { url: true }, config: { origin: r.url } });
      expect(one.config.url).toBeUndefined();
    }
    const all = JSON.stringify(await w.call('GET', '/admin/api/notifiers'));
    for (const secret of ['tok-Discord_secret', 'sig-Teams-secret', 'key-Chat-secret', 'tok-Chat-secret'])
      expect(all).not.toContain(secret);
  });

  it('refuses a retired Office 365 connector URL for TEAMS and a Google Chat URL without its key and token', async () => {
    const create = (type: string, url: string) =>
      fetch(`${w.d.url}/admin/api/notifiers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${w.d.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `bad-${type.toLowerCase()}`, type, config: { url } }),
      });
    const connector = await create('TEAMS', 'https://contoso.webhook.office.com/webhookb2/a@b/IncomingWebhook/c/d');
    expect(connector.status).toBe(400);
    expect(((await connector.json()) as { errors: unknown }).errors).toEqual([
      expect.objectContaining({ field: 'config.url', message: expect.stringMatching(/Workflows/) }),
    ]);
    const chatUrl = await create('GOOGLE_CHAT', 'https://chat.googleapis.com/v1/spaces/AAAA/messages?key=k');
    expect(chatUrl.status).toBe(400);
    expect(((await chatUrl.json()) as { errors: unknown }).errors).toEqual([
      expect.objectContaining({ field: 'config.url', message: expect.stringMatching(/token=/) }),
    ]);
    // The same checks on a PATCH; the notifier keeps its URL.
    const patched = await fetch(`${w.d.url}/admin/api/notifiers/${ids.TEAMS}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${w.d.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ config: { url: 'https://outlook.office.com/webhook/a@b/IncomingWebhook/c/d' } }),
    });
    expect(patched.status).toBe(400);
    expect(await w.call('GET', `/admin/api/notifiers/${ids.TEAMS}`)).toMatchObject({ config: { origin: teams.url } });
    // A URL that does not parse is the generic 400, not a crash in the type's own checks (the hostile suite found a 500).
    for (const type of ['DISCORD', 'TEAMS', 'GOOGLE_CHAT']) {
      const relative = await create(type, '/x');
      expect(relative.status, type).toBe(400);
      expect(((await relative.json()) as { errors: unknown }).errors).toEqual([
        { field: 'config.url', message: 'must be an absolute http:// or https:// URL' },
      ]);
    }
  });
});

describe('test messages', () => {
  it('each provider accepts one with its own success answer', async () => {
    const test = (type: string) => w.call('POST', `/admin/api/notifiers/${ids[type]}/test`);
    expect(await test('DISCORD')).toMatchObject({ ok: true, statusCode: 200 });
    expect(await test('TEAMS')).toMatchObject({ ok: true, statusCode: 202 });
    expect(await test('GOOGLE_CHAT')).toMatchObject({ ok: true, statusCode: 200 });

    expect(new URL(discord.received[0].path, discord.url).searchParams.get('wait')).toBe('true');
    const [embed] = discord.accepted[0].embeds;
    expect(discord.accepted[0]).toMatchObject({ username: 'monctl', allowed_mentions: { parse: [] } });
    expect(embed).toMatchObject({
      title: 'monctl test notification',
      color: 0x5865f2,
      url: `${PUBLIC_URL}/`,
      fields: [{ value: `${PUBLIC_URL}/` }],
    });

    const card = teams.accepted[0].attachments[0].content;
    expect(card).toMatchObject({ type: 'AdaptiveCard', version: '1.4', actions: [{ type: 'Action.OpenUrl', url: `${PUBLIC_URL}/` }] });
    expect(card.body[0]).toMatchObject({ text: 'monctl test notification', weight: 'Bolder', color: 'Accent' });

    expect(chat.accepted[0].text).toMatch(/^\*monctl test notification\*\nThis is a test message from monctl/);
    expect(chat.accepted[0].text.split('\n').at(-1)).toBe(`<${PUBLIC_URL}/|Open in monctl>`);
  });

  it('a refusal in the provider own shape is reported and not retryable', async () => {
    discord.answerNext({
      status: 400,
      body: '{"code": 50006, "message": "Cannot send an empty message"}',
      headers: { 'content-type': 'application/json' },
    });
    const refused = await w.call('POST', `/admin/api/notifiers/${ids.DISCORD}/test`);
    expect(refused).toMatchObject({
      ok: false,
      statusCode: 400,
      retryable: false,
      error: 'HTTP 400: Cannot send an empty message (50006)',
    });
    chat.answerNext({
      status: 400,
      body: '{"error": {"code": 400, "message": "Message cannot be empty.", "status": "INVALID_ARGUMENT"}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(await w.call('POST', `/admin/api/notifiers/${ids.GOOGLE_CHAT}/test`)).toMatchObject({
      ok: false,
      retryable: false,
      error: 'HTTP 400: Message cannot be empty. (400)',
    });
  });
});

describe('an incident', () => {
  it('opens and resolves in each channel, the name escaped; 429s wait as long as asked; a 400 is not retried', async () => {
    const r = await w.resource(NAME, { target: `${w.target.url}/db` });
    await w.rule({ name: 'chat', events: ['INCIDENT_OPENED', 'INCIDENT_RESOLVED'], notifierIds: Object.values(ids), resourceIds: [r.id] });
    const before = { discord: discord.accepted.length, teams: teams.accepted.length, chat: chat.accepted.length };
    const attemptsBefore = discord.received.length;
    // Discord gives its wait in the body only (1.2 s); Teams in Retry-After (1 s); Google Chat refuses once with a 400.
    discord.answerNext(discordRateLimited(1.2, false));
    teams.answerNext({
      status: 429,
      body: '{"error":{"code":"WorkflowTriggeredTooFrequently","message":"Rate limit"}}',
      headers: { 'retry-after': '1' },
    });
    chat.answerNext({
      status: 400,
      body: '{"error":{"code":400,"message":"Invalid JSON payload received.","status":"INVALID_ARGUMENT"}}',
      headers: { 'content-type': 'application/json' },
    });
    const chatAttempts = chat.received.length;

    w.target.status = 503;
    await w.checks(r.id, 3);
    await eventually(
      'the DOWN message on Discord and Teams',
      () => discord.accepted.length > before.discord && teams.accepted.length > before.teams,
      20_000,
    );
    const discordTimes = discord.times.slice(attemptsBefore);
    expect(discordTimes).toHaveLength(2);
    expect(discordTimes[1] - discordTimes[0]).toBeGreaterThanOrEqual(1200);
    const teamsTimes = teams.times.slice(-2);
    expect(teamsTimes[1] - teamsTimes[0]).toBeGreaterThanOrEqual(1000);
    expect((await deliveries('DISCORD')).slice(0, 2).map((a) => [a.attempt, a.ok, a.statusCode])).toEqual([
      [2, true, 200],
      [1, false, 429],
    ]);
    // Google Chat's 400 ended the delivery: one attempt, recorded as failed, never repeated.
    await eventually('the refused Chat attempt', async () =>
      (await deliveries('GOOGLE_CHAT')).some((a) => a.statusCode === 400 && a.attempt === 1),
    );
    expect(chat.received.length - chatAttempts).toBe(1);

    const down = discord.accepted.at(-1).embeds[0];
    expect(down.color).toBe(0xd83c3e);
    expectDiscordEscaped(down.title);
    expectDiscordEscaped(down.description);
    const card = teams.accepted.at(-1).attachments[0].content;
    expect(card.body[0].color).toBe('Attention');
    expectTeamsEscaped(card);

    w.target.status = 200;
    await w.check(r.id);
    await eventually(
      'the UP message in all three',
      () =>
        discord.accepted.length === before.discord + 2 &&
        teams.accepted.length === before.teams + 2 &&
        chat.accepted.length === before.chat + 1,
    );
    const up = discord.accepted.at(-1).embeds[0];
    expect(up.color).toBe(0x2eb67d);
    expectDiscordEscaped(up.title);
    expect(up.url).toMatch(new RegExp(`^${PUBLIC_URL}/admin/api/incidents/\\d+$`));
    const upCard = teams.accepted.at(-1).attachments[0].content;
    expect(upCard.body[0].color).toBe('Good');
    expectTeamsEscaped(upCard);
    expectChatEscaped(chat.accepted.at(-1).text);
    // The refused DOWN stayed refused: Chat got only the UP message after it.
    expect(chat.received.length - chatAttempts).toBe(2);
    expect(chat.accepted.at(-1).text).toMatch(/^\*UP: /);
  }, 60_000);
});

const renderedOf = (text: string): RenderedMessage => ({
  title: `DOWN: ${'*'.repeat(400)}`,
  text,
  link: `${PUBLIC_URL}/admin/api/incidents`,
  tone: 'problem',
  summary: { down: 1, agentDown: 0, certExpiring: 0, certRenewalFailed: 0, recovered: 0, agentUp: 0 },
});

describe('limits and templates', () => {
  it('a message longer than a provider takes is cut to its limits, never inside an escape', () => {
    const long = renderedOf(`${'_'.repeat(5000)}\nDetails: ${PUBLIC_URL}/admin/api/incidents`);
    const [embed] = JSON.parse(discordBody(long)).embeds;
    expect(embed.title.length).toBeLessThanOrEqual(256);
    expect(embed.description.length).toBeLessThanOrEqual(4096);
    for (const cut of [embed.title, embed.description]) {
      expect(cut.endsWith('…')).toBe(true);
      expect(bareMarkup(cut.slice(0, -1), /[*_]/g)).toEqual([]);
    }
    const text: string = JSON.parse(googleChatBody(long)).text;
    expect(text.length).toBeLessThanOrEqual(4096);
    expect(text.split('\n').at(-1)).toBe(`<${PUBLIC_URL}/admin/api/incidents|Open in monctl>`);
  });

  it("a template's output (markup) is sent as it is, not escaped again", () => {
    const markup: RenderedMessage = { ...renderedOf('**db** is _down_'), title: '**DOWN**', markup: true };
    expect(JSON.parse(discordBody(markup)).embeds[0]).toMatchObject({ title: '**DOWN**', description: '**db** is _down_' });
    expect(JSON.parse(googleChatBody(markup)).text).toBe('***DOWN***\n**db** is _down_');
  });
});

/** Discord: no markdown or mention character left bare, and the reader sees the name as it is. */
function expectDiscordEscaped(text: string) {
  expect(bareMarkup(text, /[*_~`|<>[\]()@]/g)).toEqual([]);
  expect(unescapeMarkdown(text)).toContain(NAME);
}

/** Teams: TextBlocks and facts are CommonMark: no emphasis, link, code, HTML or entity left bare. */
function expectTeamsEscaped(card: any) {
  const texts = [
    ...card.body.filter((b: any) => b.type === 'TextBlock').map((b: any) => b.text),
    ...card.body.filter((b: any) => b.type === 'FactSet').flatMap((b: any) => b.facts.map((f: any) => f.value)),
  ];
  for (const text of texts) expect(bareMarkup(text, /[*_~`<>[\]()&]/g)).toEqual([]);
  expect(unescapeMarkdown(card.body[0].text)).toContain(NAME);
  expect(card.body.find((b: any) => b.type === 'FactSet').facts.map((f: any) => unescapeMarkdown(f.value))).toContain(NAME);
}

/** Google Chat: the title in *bold*, no other pair of its markup or `<…>` syntax but the link at the end. */
function expectChatEscaped(text: string) {
  const lines = text.split('\n');
  expect(lines[0]).toMatch(/^\*[^*]+\*$/);
  expect(lines.at(-1)).toMatch(new RegExp(`^<${PUBLIC_URL}/admin/api/incidents/\\d+\\|Open in monctl>$`));
  const inner = [lines[0].slice(1, -1), ...lines.slice(1, -1)].join('\n');
  // Chat has no backslash escape: the name shows in look-alikes of the characters it would read.
  expect(bareMarkup(inner, /[*_~`<>]/g, false)).toEqual([]);
  expect(inner).toContain('dbˍ∗[prod]∗‹b›&amp;ˋ(1) @everyone ‹users/all›');
}
