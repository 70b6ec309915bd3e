import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, expectProblem, fieldsOf, sendJson } from '../helpers/http.ts';
import { queryDb } from '../helpers/test-database.ts';
import { type AlertWorld, eventually, startAlertWorld } from '../alerts/world.ts';
import { startSlackReceiver } from './receivers.ts';

/**
 * Message templates through a real daemon (docs/API.md#message-templates): a template that does
 * not parse is a 400 at create and PATCH; an incident reaches Slack receivers through templates,
 * with the resource's name (Markdown, HTML and Liquid syntax in it) printed as escaped text; the
 * templates that fail (an error while rendering, a loop without end, a filter that no longer
 * exists) send the default message and the delivery log says why; `test {event}` and `preview`.
 */
const PUBLIC = 'https://monctl.example.test';
const NAME = 'db_*[prod]*<b>&amp;`(1)` {{ 7*7 }}{% raw %} 100% up';
/** The name as Slack's mrkdwn wants it: `&`, `<` and `>` escaped, nothing else touched. */
const SLACK_NAME = 'db_*[prod]*&lt;b&gt;&amp;amp;`(1)` {{ 7*7 }}{% raw %} 100% up';

let w: AlertWorld;
type SlackReceiver = Awaited<ReturnType<typeof startSlackReceiver>>;
const receivers: SlackReceiver[] = [];

beforeAll(async () => {
  w = await startAlertWorld({ args: ['--public-url', PUBLIC] });
});
afterAll(async () => {
  await w?.d.stop();
  await w?.target.close();
  await Promise.all(receivers.map((r) => r.close()));
});

const call = (method: string, path: string, body?: unknown) => sendJson(w.d.url, method, path, body, bearer(w.d.adminKey));

async function slackNotifier(name: string, templates: { titleTemplate?: string; bodyTemplate?: string }) {
  const receiver = await startSlackReceiver(`/services/T1/${name}/xyz`);
  receivers.push(receiver);
  const n = await w.call('POST', '/admin/api/notifiers', {
    name,
    type: 'SLACK',
    config: { url: `${receiver.url}/services/T1/${name}/xyz` },
    ...templates,
  });
  return { id: n.id as number, receiver };
}

const deliveries = (id: number) => w.call('GET', `/admin/api/notifiers/${id}/deliveries`);

describe('a template that does not parse', () => {
  it('is a 400 naming titleTemplate at create, with Liquid’s message', async () => {
    const res = await call('POST', '/admin/api/notifiers', {
      name: 'bad-title',
      type: 'SLACK',
      config: { url: 'http://127.0.0.1:9/services/x' },
      titleTemplate: '{{ alert.subject.name | shout }}',
    });
    const problem = expectProblem(res, 400);
    expect(fieldsOf(problem)).toEqual(['titleTemplate']);
    expect(problem.errors[0].message).toMatch(/undefined filter: shout/);
    expect((await w.call('GET', '/admin/api/notifiers')).map((n: { name: string }) => n.name)).not.toContain('bad-title');
  });

  it('is a 400 naming bodyTemplate at PATCH, and the stored one stays', async () => {
    const { id } = await slackNotifier('patched', { bodyTemplate: '{{ title }}' });
    for (const [template, why] of [
      ['{% if alert %}unclosed', /not closed/],
      ['{% include "/etc/passwd" %}', /cannot read files/],
    ] as const) {
      const problem = expectProblem(await call('PATCH', `/admin/api/notifiers/${id}`, { bodyTemplate: template }), 400);
      expect(fieldsOf(problem)).toEqual(['bodyTemplate']);
      expect(problem.errors[0].message).toMatch(why);
    }
    expect((await w.call('GET', `/admin/api/notifiers/${id}`)).bodyTemplate).toBe('{{ title }}');
    const patched = await w.call('PATCH', `/admin/api/notifiers/${id}`, { titleTemplate: '{{ alert.kind }}', bodyTemplate: null });
    expect(patched).toMatchObject({ titleTemplate: '{{ alert.kind }}', bodyTemplate: null });
  });
});

describe('an incident through templates', () => {
  it('renders the variables, prints the name as escaped text, and falls back (with a note) where a template fails', async () => {
    const good = await slackNotifier('good', {
      titleTemplate: '{{ alert.severity | upcase }} {{ alert.kind }}',
      bodyTemplate:
        '*{{ alert.subject.name }}* is down ({{ alert.cause.message }}, {{ alert.cause.errorCode }})\n' +
        '<{{ alert.link }}|incident {{ alert.incidentId }}> · {{ count }} alert · {{ notifier.name }}/{{ notifier.type }} · {{ tone }}',
    });
    // The name carries `%`, which url_decode cannot read: an error while rendering.
    const broken = await slackNotifier('broken', { bodyTemplate: '{{ alert.subject.name | url_decode }}' });
    const endless = await slackNotifier('endless', {
      bodyTemplate:
        '{% assign r = (1..100) %}{% for a in r %}{% for b in r %}{% for c in r %}{% for d in r %}x{% endfor %}{% endfor %}{% endfor %}{% endfor %}',
    });
    // A template stored by a version whose filters differ: it no longer parses, and is still not the end of the alert.
    const stale = await slackNotifier('stale', { bodyTemplate: '{{ title }}' });
    await queryDb(w.d, 'UPDATE notifiers SET body_template = ? WHERE id = ?', '{{ title | shout }}', stale.id);

    const r = await w.resource('db', { name: NAME });
    await w.rule({ name: 'templated', events: ['INCIDENT_OPENED'], notifierIds: [good.id, broken.id, endless.id, stale.id] });
    w.target.status = 503;
    await w.checks(r.id, 3);
    const all = [good, broken, endless, stale];
    await eventually('a message at every receiver', () => all.every((n) => n.receiver.texts.length >= 1));

    const [incident] = await w.call('GET', '/admin/api/incidents?limit=1');
    expect((await deliveries(good.id))[0]).toMatchObject({ ok: true, note: null });
    expect(good.receiver.texts).toEqual([
      `CRITICAL INCIDENT_OPENED\n*${SLACK_NAME}* is down (503 Service Unavailable, 503)\n` +
        `<${PUBLIC}/admin/api/incidents/${incident.id}|incident ${incident.id}> · 1 alert · good/SLACK · problem`,
    ]);
    expect((await deliveries(good.id))[0]).toMatchObject({ ok: true, note: null });

    for (const [n, why] of [
      [broken, /^bodyTemplate: URI malformed/],
      [endless, /^bodyTemplate: template render limit exceeded/],
      [stale, /^bodyTemplate: undefined filter: shout/],
    ] as const) {
      // The default message, escaped for Slack as without templates.
      expect(n.receiver.texts).toHaveLength(1);
      expect(n.receiver.texts[0]).toMatch(new RegExp(`^DOWN: ${escapeRegExp(SLACK_NAME)}\\n${escapeRegExp(SLACK_NAME)} is DOWN\\.`));
      const [attempt] = await deliveries(n.id);
      expect(attempt.ok).toBe(true);
      expect(attempt.note).toMatch(/^template error: /);
      expect(attempt.note.slice('template error: '.length)).toMatch(why);
      expect(attempt.note).toMatch(/; sent the default message$/);
    }
  }, 30_000);
});

describe('test {event} and preview', () => {
  it('test sends the sample alert through the templates; without an event, the plain test message', async () => {
    const n = await slackNotifier('sampled', {
      titleTemplate: '[{{ alert.kind }}]',
      bodyTemplate: '{{ alert.subject.name }} after {{ alert.duration }}',
    });
    const sample = await w.call('POST', `/admin/api/notifiers/${n.id}/test`, { event: 'INCIDENT_RESOLVED' });
    expect(sample).toMatchObject({ ok: true, note: null });
    expect(n.receiver.texts).toEqual(['[INCIDENT_RESOLVED]\nexample-api after 12 min']);
    const plain = await w.call('POST', `/admin/api/notifiers/${n.id}/test`);
    expect(plain.ok).toBe(true);
    expect(n.receiver.texts[1]).toMatch(/^monctl test notification\nThis is a test message from monctl through notifier "sampled"/);
    // A sample through a template that fails: the default sample is delivered, and the answer says why.
    await w.call('PATCH', `/admin/api/notifiers/${n.id}`, { bodyTemplate: '{{ alert.subject.name | append: "%" | url_decode }}' });
    const failed = await w.call('POST', `/admin/api/notifiers/${n.id}/test`, { event: 'AGENT_DOWN' });
    expect(failed).toMatchObject({
      ok: true,
      note: expect.stringMatching(/^template error: bodyTemplate: URI malformed.*; sent the default message$/),
    });
    expect(n.receiver.texts[2]).toMatch(/^Test: Agent DOWN: example-office\nAgent example-office is DISCONNECTED\./);
  });

  it('preview renders with the templates given, or the notifier’s own, as the channel receives them', async () => {
    const n = await slackNotifier('previewed', {
      bodyTemplate: '<{{ alert.link }}|{{ alert.subject.name }}> {{ alert.cert.thresholdDays }}d',
    });
    const own = await w.call('POST', `/admin/api/notifiers/${n.id}/preview`, { event: 'CERT_EXPIRING' });
    expect(own).toEqual({
      title: 'Test: Certificate expires in 10 days: example-api',
      body: `<${PUBLIC}/admin/api/resources/0|example-api> 14d`,
      templateError: null,
    });
    const given = await w.call('POST', `/admin/api/notifiers/${n.id}/preview`, {
      event: 'AGENT_DOWN',
      titleTemplate: '{{ alert.subject.name }} <down>',
    });
    expect(given.title).toBe('example-office <down>'); // the template's own text is mrkdwn: sent as written
    expect(given.body).toBe(`<${PUBLIC}/admin/api/incidents/0|example-office> d`);
    const failing = await w.call('POST', `/admin/api/notifiers/${n.id}/preview`, {
      event: 'INCIDENT_OPENED',
      bodyTemplate: '{{ x | nope }}',
    });
    expect(failing.templateError).toMatch(/^bodyTemplate: undefined filter: nope/);
    expect(failing.title).toBe('Test: DOWN: example-api');
    expect(failing.body).toMatch(/^example-api is DOWN\.\nTarget: https:\/\/api\.example\.com\/health\n/);
    // Without an event: an opening when there is a template to show, else the plain test message.
    const opening = await w.call('POST', `/admin/api/notifiers/${n.id}/preview`);
    expect(opening).toEqual({
      title: 'Test: DOWN: example-api',
      body: `<${PUBLIC}/admin/api/incidents/0|example-api> d`,
      templateError: null,
    });
    const bare = await slackNotifier('previewed-bare', {});
    const plain = await w.call('POST', `/admin/api/notifiers/${bare.id}/preview`);
    expect(plain).toMatchObject({ title: 'monctl test notification', templateError: null });
    expect(n.receiver.received).toEqual([]); // a preview sends nothing
    expect(bare.receiver.received).toEqual([]);
  });
});

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
