import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, fieldsOf, sendJson, bearer } from '../helpers/http.ts';
import { startWebhookReceiver } from '../notifiers/receivers.ts';
import { readDb } from './helpers.ts';
import { type AlertWorld, eventually, startAlertWorld, type WebhookItem } from './world.ts';

/**
 * Routing by severity (docs/API.md#severity): resources store their severity, the incident
 * engine freezes it into the event, rules' `severities` choose what they route and their
 * `severityOverride` is frozen into what each notifier receives (the WEBHOOK item's `severity`).
 * One daemon, two Standard Webhooks receivers: `chat` and `pager`. Where each event went is read
 * from the store once the router has claimed it (the claim and the items commit together), so a
 * misrouted alert fails the test without waiting for it to arrive.
 */
let w: AlertWorld;
const secrets = { chat: '', pager: '' };
let chat: Awaited<ReturnType<typeof startWebhookReceiver>>;
let pager: Awaited<ReturnType<typeof startWebhookReceiver>>;
const ids = { chat: 0, pager: 0 };

beforeAll(async () => {
  w = await startAlertWorld();
  [chat, pager] = await Promise.all([startWebhookReceiver(() => secrets.chat), startWebhookReceiver(() => secrets.pager)]);
  for (const [name, receiver] of [
    ['chat', chat],
    ['pager', pager],
  ] as const) {
    const n = await w.notifier(name, 'WEBHOOK', { url: `${receiver.url}/hook` });
    secrets[name] = n.signingSecret!;
    ids[name] = n.id;
  }
});
afterAll(async () => {
  await Promise.all([chat?.close(), pager?.close(), w?.target.close()]);
  await w?.d.stop();
});

type Item = WebhookItem & { severity: string };
const EVENTS = ['INCIDENT_OPENED', 'INCIDENT_RESOLVED'];

/** What a receiver got for one resource: `KIND severity`, reminders marked. */
const received = (r: typeof chat, name: string) =>
  r.verified
    .flatMap((p) => (p as { data: { items: Item[] } }).data.items)
    .filter((i) => i.subject.name === name)
    .map((i) => `${i.kind} ${i.severity}${i.reminder ? ' (reminder)' : ''}`);

/**
 * Waits until the resource has `count` alert events (or more: then the caller's comparison fails
 * at once), all routed; answers per event its kind and where it went (`notifier severity`,
 * reminders left out), in event order.
 */
async function routes(resourceId: number, count: number): Promise<string[]> {
  let events: Array<{ id: number; kind: string; routed_at: number | null }> = [];
  await eventually(`${count} routed events of resource ${resourceId}`, async () => {
    events = await readDb(w.d, 'SELECT id, kind, routed_at FROM alert_events WHERE resource_id = ? ORDER BY id', resourceId);
    return events.length >= count && events.every((e) => e.routed_at !== null);
  });
  const names = new Map([
    [ids.chat, 'chat'],
    [ids.pager, 'pager'],
  ]);
  const out: string[] = [];
  for (const e of events) {
    const items = await readDb<{ notifier_id: number; severity: string }>(
      w.d,
      'SELECT n.notifier_id, i.severity FROM notification_items i JOIN notifications n ON n.id = i.notification_id WHERE i.event_id = ? AND i.reminder = 0',
      e.id,
    );
    const to = items.map((i) => `${names.get(Number(i.notifier_id))} ${i.severity}`).sort();
    out.push(`${e.kind} -> ${to.join(', ') || 'nowhere'}`);
  }
  return out;
}

/** The severity frozen into each event's payload, in event order. */
const payloadSeverities = async (resourceId: number) =>
  (await readDb<{ payload: string }>(w.d, 'SELECT payload FROM alert_events WHERE resource_id = ? ORDER BY id', resourceId)).map(
    (e) => (JSON.parse(e.payload) as { severity?: string }).severity ?? null,
  );

describe('resources carry a severity', () => {
  it('is stored on create and PATCH (critical by default), and another value is a 400 naming severity', async () => {
    const warn = await w.resource('stored-warning', { severity: 'warning' });
    expect(await w.call('GET', `/admin/api/resources/${warn.id}`)).toMatchObject({ severity: 'warning' });
    const plain = await w.resource('stored-default');
    expect(await w.call('GET', `/admin/api/resources/${plain.id}`)).toMatchObject({ severity: 'critical' });
    const due = () => readDb<{ next_run_at: number }>(w.d, 'SELECT next_run_at FROM resources WHERE id = ?', plain.id);
    const before = await due();
    expect(await w.call('PATCH', `/api/resources/${plain.id}`, { severity: 'info' })).toMatchObject({ severity: 'info' });
    // It changes how alerts route, not what is checked: no check is brought forward.
    expect(await due()).toEqual(before);
    expect(await w.call('GET', `/admin/api/resources/${plain.id}`)).toMatchObject({ severity: 'info' });

    const auth = bearer(w.d.adminKey);
    const bad = await sendJson(
      w.d.url,
      'POST',
      '/api/resources',
      { name: 'bad', resourceType: 'HTTP', target: w.target.url, severity: 'major' },
      auth,
    );
    const problem = expectProblem(bad, 400);
    expect(fieldsOf(problem)).toEqual(['severity']);
    expect(problem.errors[0].message).toMatch(/critical.*warning.*info/);
    expect(
      fieldsOf(expectProblem(await sendJson(w.d.url, 'PATCH', `/api/resources/${plain.id}`, { severity: 'CRITICAL' }, auth), 400)),
    ).toEqual(['severity']);
    expect(await w.call('GET', `/admin/api/resources/${plain.id}`)).toMatchObject({ severity: 'info' });
  });
});

describe('rules route by severity', () => {
  it('a warning incident goes to the rule for warnings and not to the critical-only rule, and a critical one the other way round', async () => {
    const warn = await w.resource('api-warn', { severity: 'warning', failureThreshold: 1 });
    const crit = await w.resource('api-crit', { failureThreshold: 1 });
    const resourceIds = [warn.id, crit.id];
    await w.rule({ name: 'to-chat', events: EVENTS, notifierIds: [ids.chat], resourceIds, severities: ['warning', 'info'] });
    await w.rule({ name: 'to-pager', events: EVENTS, notifierIds: [ids.pager], resourceIds, severities: ['critical'] });

    w.target.status = 503;
    await w.check(warn.id);
    await w.check(crit.id);
    expect(await routes(warn.id, 1)).toEqual(['INCIDENT_OPENED -> chat warning']);
    expect(await routes(crit.id, 1)).toEqual(['INCIDENT_OPENED -> pager critical']);
    expect(await payloadSeverities(warn.id)).toEqual(['warning']);

    // A rule created while both are open catches up only the severities it takes.
    await w.rule({ name: 'late', events: ['INCIDENT_OPENED'], notifierIds: [ids.pager], resourceIds, severities: ['warning'] });
    expect(await routes(warn.id, 2)).toEqual(['INCIDENT_OPENED -> chat warning', 'INCIDENT_OPENED -> pager warning']);
    expect(await routes(crit.id, 1)).toEqual(['INCIDENT_OPENED -> pager critical']);

    w.target.status = 200;
    await w.check(warn.id);
    await w.check(crit.id);
    expect((await routes(warn.id, 3))[2]).toBe('INCIDENT_RESOLVED -> chat warning');
    expect(await routes(crit.id, 2)).toEqual(['INCIDENT_OPENED -> pager critical', 'INCIDENT_RESOLVED -> pager critical']);
    await eventually('every alert delivered', () => received(chat, 'api-warn').length === 2 && received(pager, 'api-crit').length === 2);
    await eventually('the catch-up delivered', () => received(pager, 'api-warn').length === 1);
    expect(received(chat, 'api-warn')).toEqual(['INCIDENT_OPENED warning', 'INCIDENT_RESOLVED warning']);
    expect(received(pager, 'api-crit')).toEqual(['INCIDENT_OPENED critical', 'INCIDENT_RESOLVED critical']);
    expect(received(pager, 'api-warn')).toEqual(['INCIDENT_OPENED warning']);
    expect(received(chat, 'api-crit')).toEqual([]);
  });

  it('severityOverride reaches the items: the highest of two rules, reminders their rule’s, a resolution its opening’s', async () => {
    const quiet = await w.resource('batch-info', { severity: 'info', failureThreshold: 1 });
    const scope = { events: EVENTS, resourceIds: [quiet.id] };
    // Reminders every 3 s from this rule only.
    await w.rule({ name: 'both', ...scope, notifierIds: [ids.chat, ids.pager], severityOverride: 'warning', repeatIntervalMinutes: 0.02 });
    const loud = { name: 'loud', ...scope, notifierIds: [ids.chat], severityOverride: 'critical', repeatIntervalMinutes: 0 };
    const rule = await w.rule(loud);

    w.target.status = 503;
    await w.check(quiet.id);
    expect(await routes(quiet.id, 1)).toEqual(['INCIDENT_OPENED -> chat critical, pager warning']);
    await eventually('a reminder at each', () =>
      [chat, pager].every((r) => received(r, 'batch-info').some((s) => s.endsWith('(reminder)'))),
    );
    // Each reminder pass sends one more of the same: the distinct lines.
    expect(new Set(received(chat, 'batch-info'))).toEqual(new Set(['INCIDENT_OPENED critical', 'INCIDENT_OPENED warning (reminder)']));
    expect(new Set(received(pager, 'batch-info'))).toEqual(new Set(['INCIDENT_OPENED warning', 'INCIDENT_OPENED warning (reminder)']));

    // The override changes while the incident is open: its resolution keeps what its opening had.
    await w.call('PUT', `/admin/api/alert-rules/${rule.id}`, { ...loud, groupWaitSeconds: 0, severityOverride: 'info' });
    w.target.status = 200;
    await w.check(quiet.id);
    expect(await routes(quiet.id, 2)).toEqual([
      'INCIDENT_OPENED -> chat critical, pager warning',
      'INCIDENT_RESOLVED -> chat critical, pager warning',
    ]);
    await eventually('the resolutions', () =>
      [chat, pager].every((r) => received(r, 'batch-info').some((s) => s.startsWith('INCIDENT_RESOLVED'))),
    );
    expect(received(chat, 'batch-info').filter((s) => !s.endsWith('(reminder)'))).toEqual([
      'INCIDENT_OPENED critical',
      'INCIDENT_RESOLVED critical',
    ]);
    expect(received(pager, 'batch-info').filter((s) => !s.endsWith('(reminder)'))).toEqual([
      'INCIDENT_OPENED warning',
      'INCIDENT_RESOLVED warning',
    ]);
  }, 45_000);

  it('a PATCH of severity changes later events only', async () => {
    const moving = await w.resource('moving', { failureThreshold: 1 });
    await w.rule({ name: 'critical-only', events: EVENTS, notifierIds: [ids.pager], resourceIds: [moving.id], severities: ['critical'] });

    w.target.status = 503;
    await w.check(moving.id);
    expect(await routes(moving.id, 1)).toEqual(['INCIDENT_OPENED -> pager critical']);
    await w.call('PATCH', `/api/resources/${moving.id}`, { severity: 'info' });

    // The open incident stays critical to its end; the next one is info, which the rule does not take.
    w.target.status = 200;
    await w.check(moving.id);
    w.target.status = 503;
    await w.check(moving.id);
    expect(await routes(moving.id, 3)).toEqual([
      'INCIDENT_OPENED -> pager critical',
      'INCIDENT_RESOLVED -> pager critical',
      'INCIDENT_OPENED -> nowhere',
    ]);
    expect(await payloadSeverities(moving.id)).toEqual(['critical', null, 'info']);
    await eventually('both delivered', () => received(pager, 'moving').length === 2);
    expect(received(pager, 'moving')).toEqual(['INCIDENT_OPENED critical', 'INCIDENT_RESOLVED critical']);
  });
});
