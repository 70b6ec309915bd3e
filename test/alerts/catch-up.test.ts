import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookReceiver } from '../notifiers/receivers.ts';
import { type AlertWorld, eventually, itemsOf, settled, startAlertWorld } from './world.ts';

/**
 * Issue 25: an incident already open when a rule is created was never
 * notified. As Alertmanager sends a new route what is already firing, a rule
 * created (or enabled) now notifies the open incidents it covers, through
 * the outbox: once per incident and notifier, never where the opening went.
 */
let w: AlertWorld;
const secrets = { a: '', b: '' };
let a: Awaited<ReturnType<typeof startWebhookReceiver>>;
let b: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  w = await startAlertWorld();
  [a, b] = await Promise.all([startWebhookReceiver(() => secrets.a), startWebhookReceiver(() => secrets.b)]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close(), w?.target.close()]);
  await w?.d.stop();
});

/** `INCIDENT_OPENED web` per item received, reminders left out. */
const received = (r: typeof a) =>
  r.verified
    .flatMap((p) =>
      itemsOf(p)
        .filter((i) => !i.reminder)
        .map((i) => `${i.kind} ${i.subject.name}`),
    )
    .sort();

describe('a rule created while incidents are open', () => {
  it('notifies the open incidents it covers, once per notifier, and a later rule or re-enabling sends nothing twice', async () => {
    const na = await w.notifier('a', 'WEBHOOK', { url: `${a.url}/hook` });
    const nb = await w.notifier('b', 'WEBHOOK', { url: `${b.url}/hook` });
    secrets.a = na.signingSecret!;
    secrets.b = nb.signingSecret!;
    w.target.status = 503;
    const web = await w.resource('web', { failureThreshold: 1 });
    const db = await w.resource('db', { failureThreshold: 1 });
    await w.check(web.id);
    await w.check(db.id);
    // Open, with no rule: nothing is sent.
    const open = await w.call('GET', '/admin/api/incidents?state=open');
    expect(open).toHaveLength(2);

    // Rule X covers web only: a gets web's opening.
    await w.rule({ name: 'x', events: ['INCIDENT_OPENED', 'INCIDENT_RESOLVED'], notifierIds: [na.id], resourceIds: [web.id] });
    await eventually('web opened at a', () => received(a).includes('INCIDENT_OPENED web'));

    // Rule Y covers everything, to a and b: b gets both, a only db (it has web's already).
    const y = await w.rule({ name: 'y', events: ['INCIDENT_OPENED'], notifierIds: [na.id, nb.id] });
    await eventually('both at b, db at a', () => received(b).length === 2 && received(a).length === 2);

    // Disabled and enabled again: every notifier has both openings, nothing more goes out.
    const body = { name: 'y', events: ['INCIDENT_OPENED'], notifierIds: [na.id, nb.id], groupWaitSeconds: 0 };
    await w.call('PUT', `/admin/api/alert-rules/${y.id}`, { ...body, enabled: false });
    await w.call('PUT', `/admin/api/alert-rules/${y.id}`, { ...body, enabled: true });

    // The resolution goes where the opening went (a, through rule x); its event is routed after the catch-ups of the re-enabling.
    w.target.status = 200;
    await w.check(web.id);
    await eventually('web resolved at a', () => received(a).includes('INCIDENT_RESOLVED web'));
    await settled(w.d); // routed and dispatched, and passes after: anything sent twice would be here by now
    expect(received(a)).toEqual(['INCIDENT_OPENED db', 'INCIDENT_OPENED web', 'INCIDENT_RESOLVED web']);
    expect(received(b)).toEqual(['INCIDENT_OPENED db', 'INCIDENT_OPENED web']);
    expect(await w.call('GET', '/admin/api/incidents?state=open')).toEqual([expect.objectContaining({ resourceId: db.id })]);
  }, 60_000);

  it('an incident opened in a maintenance window stays silent for a new rule too', async () => {
    const n = await w.notifier('c', 'WEBHOOK', { url: `${b.url}/c` });
    const quiet = await w.resource('quiet', { failureThreshold: 1 });
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
    await w.call('POST', '/admin/api/maintenance', {
      name: 'm',
      kind: 'ONE_OFF',
      startsAt: iso(now - 60_000),
      endsAt: iso(now + 3_600_000),
      resourceIds: [quiet.id],
    });
    w.target.status = 503;
    await w.check(quiet.id);
    const before = b.verified.length;
    await w.rule({ name: 'z', events: ['INCIDENT_OPENED'], notifierIds: [n.id], resourceIds: [quiet.id] });
    await settled(w.d); // catch-ups are written with the rule: routed and dispatched by now
    expect(b.verified.length).toBe(before);
  }, 30_000);
});
