import { describe, expect, it } from 'vitest';
import { htmlPart } from '../../daemon/alerts/notifiers/email.ts';
import { escapeFor } from '../../daemon/alerts/notifiers/escapes.ts';
import { renderMessage } from '../../daemon/alerts/notifiers/render.ts';
import { sampleItem, testMessage } from '../../daemon/alerts/notifiers/samples.ts';
import { slackBody } from '../../daemon/alerts/notifiers/slack.ts';
import { checkTemplates, parseProblem, renderWithTemplates, type TemplatedNotifier } from '../../daemon/alerts/notifiers/templates.ts';
import type { AlertItem, OutgoingMessage } from '../../daemon/alerts/types.ts';
import { HttpError } from '../../src/errors.ts';
import { NOTIFIER_TYPES, type NotifierType } from '../../src/notifier-fields.ts';

/**
 * The template renderer on its own (docs/API.md#message-templates): every documented variable,
 * escaping by the channel's `escape`, data that looks like Liquid printed as text, and the
 * failures (a filter that does not exist, an error while rendering, a loop that does not end,
 * a file read) that leave the default message and say why.
 */
const NOW = Date.UTC(2026, 10, 21, 10, 0, 0);
const MIN = 60_000;
const PUBLIC = 'https://monctl.example.test';
const NASTY = 'db_*[prod]*<b>&amp;`(1)` {{ 7*7 }}{% raw %}';

function down(name: string, over: Partial<AlertItem> = {}): AlertItem {
  return {
    kind: 'INCIDENT_OPENED',
    eventId: 1,
    at: NOW,
    reminder: false,
    incidentId: 42,
    subject: { type: 'resource', id: 7, name, target: 'https://db.example.test/' },
    openedAt: NOW - 12 * MIN,
    resolvedAt: null,
    cause: { message: 'HTTP 503 Service Unavailable', errorCode: '503' },
    cert: null,
    severity: 'warning',
    dependents: { count: 2, names: ['api-1', 'api-2'] },
    ...over,
  };
}
const message = (items: AlertItem[]): OutgoingMessage => ({ id: 'msg_1', items, test: false });
const notifier = (type: NotifierType, titleTemplate: string | null, bodyTemplate: string | null): TemplatedNotifier => ({
  name: 'ops',
  type,
  titleTemplate,
  bodyTemplate,
});
const render = (n: TemplatedNotifier, m: OutgoingMessage) => renderWithTemplates(n, m, { publicUrl: PUBLIC, now: NOW });

describe('variables', () => {
  it('a template using every documented variable renders their values', async () => {
    const cert: AlertItem = {
      ...down('edge'),
      kind: 'CERT_EXPIRING',
      eventId: 2,
      incidentId: null,
      openedAt: null,
      cause: null,
      cert: { notAfter: NOW + 3 * 86_400_000, thresholdDays: 7 },
      severity: 'critical',
      dependents: undefined,
    };
    const m = message([down('db'), cert]);
    const body = [
      '{{ title }}|{{ tone }}|{{ link }}|{{ count }}|{{ test }}|{{ now }}',
      '{{ counts.down }},{{ counts.agentDown }},{{ counts.certExpiring }},{{ counts.certRenewalFailed }},{{ counts.recovered }},{{ counts.agentUp }}',
      '{{ notifier.name }}/{{ notifier.type }}',
      '{% for a in alerts %}{{ a.kind }};{{ a.severity }};{{ a.reminder }};{{ a.subject.type }};{{ a.subject.id }};{{ a.subject.name }};' +
        '{{ a.subject.target }};{{ a.incidentId }};{{ a.openedAt }};{{ a.resolvedAt }};{{ a.duration }};{{ a.durationSeconds }};' +
        '{{ a.cause.message }};{{ a.cause.errorCode }};{{ a.cert.notAfter }};{{ a.cert.thresholdDays }};' +
        '{{ a.dependents.count }};{{ a.dependents.names | join: "+" }};{{ a.link }}{% unless forloop.last %}\n{% endunless %}{% endfor %}',
      'first={{ alert.subject.name }} size={{ alerts.size }}',
      '{{ text }}',
    ].join('\n');
    const { rendered, templateError } = await render(notifier('WEBHOOK', '{{ count }} alerts for {{ notifier.name }}', body), m);
    expect(templateError).toBeNull();
    const plain = renderMessage(m, { publicUrl: PUBLIC, now: NOW, notifierName: 'ops' });
    expect(rendered).toMatchObject({ title: '2 alerts for ops', markup: true, tone: 'problem', link: plain.link });
    const lines = rendered.text.split('\n');
    expect(lines[0]).toBe(`${plain.title}|problem|${PUBLIC}/admin/api/incidents|2|false|2026-11-21T10:00:00.000Z`);
    expect(lines[1]).toBe('1,0,1,0,0,0');
    expect(lines[2]).toBe('ops/WEBHOOK');
    expect(lines[3]).toBe(
      'INCIDENT_OPENED;warning;false;resource;7;db;https://db.example.test/;42;2026-11-21T09:48:00.000Z;;12 min;720;' +
        `HTTP 503 Service Unavailable;503;;;2;api-1+api-2;${PUBLIC}/admin/api/incidents/42`,
    );
    expect(lines[4]).toBe(
      'CERT_EXPIRING;critical;false;resource;7;edge;https://db.example.test/;;;;;;;;2026-11-24T10:00:00.000Z;7;0;;' +
        `${PUBLIC}/admin/api/resources/7`,
    );
    expect(lines[5]).toBe('first=db size=2');
    expect(rendered.text.endsWith(plain.text)).toBe(true);
  });

  it('a test message has no alert, and the variables of the plain test message', async () => {
    const { rendered } = await render(
      notifier('WEBHOOK', null, '{{ test }} {{ count }} [{{ alert }}] {{ tone }} {{ alert.subject.name | default: "none" }}'),
      { id: 'msg_t', items: [], test: true },
    );
    expect(rendered.text).toBe('true 0 [] test none');
    expect(rendered.title).toBe('monctl test notification');
  });

  it('sees values only: no prototypes, no functions, and lists print as JSON', async () => {
    const { rendered, templateError } = await render(
      notifier(
        'WEBHOOK',
        null,
        '[{{ alert.constructor }}][{{ alert.__proto__ }}][{{ alerts.constructor.name }}][{{ alert.dependents.names }}]',
      ),
      message([down('db')]),
    );
    expect(templateError).toBeNull();
    expect(rendered.text).toBe('[][][][["api-1","api-2"]]');
  });
});

describe('escaping', () => {
  it('prints a name carrying Liquid syntax as text, never evaluated', async () => {
    const { rendered, templateError } = await render(
      notifier('WEBHOOK', '{{ alert.subject.name }}', 'n={{ alert.subject.name }}'),
      message([down(NASTY)]),
    );
    expect(templateError).toBeNull();
    expect(rendered.title).toBe(NASTY);
    expect(rendered.text).toBe(`n=${NASTY}`);
  });

  it('SLACK: variables escaped for mrkdwn, the template text is markup, and the body sent as it is', async () => {
    const { rendered } = await render(
      notifier('SLACK', null, '*DOWN* <{{ alert.link }}|{{ alert.subject.name }}>'),
      message([down(NASTY)]),
    );
    const name = 'db_*[prod]*&lt;b&gt;&amp;amp;`(1)` {{ 7*7 }}{% raw %}';
    expect(rendered.text).toBe(`*DOWN* <${PUBLIC}/admin/api/incidents/42|${name}>`);
    expect(rendered.title).toBe(`DOWN: ${name}`); // not templated: the default, escaped once
    expect(JSON.parse(slackBody(rendered)).text).toBe(`DOWN: ${name}\n${rendered.text}`);
    // Without templates the default text is escaped by slackBody, as before.
    const plain = renderMessage(message([down(NASTY)]), { publicUrl: PUBLIC, now: NOW });
    expect(JSON.parse(slackBody(plain)).text).toContain(`DOWN: ${name}\n`);
  });

  it('`raw` does not turn the escaping off', async () => {
    const { rendered } = await render(notifier('SLACK', null, '{{ alert.subject.name | raw }}'), message([down('<b>')]));
    expect(rendered.text).toBe('&lt;b&gt;');
  });

  it("every type prints a variable through its channel's escape", async () => {
    for (const type of NOTIFIER_TYPES) {
      const { rendered } = await render(notifier(type, null, '[{{ alert.subject.name }}]'), message([down(NASTY)]));
      expect(rendered.text, type).toBe(`[${escapeFor(type)(NASTY)}]`);
    }
  });

  it('EMAIL: the HTML part is the text in <pre>, so a name in it is never markup', () => {
    expect(htmlPart(`DOWN: ${NASTY}\nline 2`)).toBe(
      '<pre style="font-family: ui-monospace, Menlo, Consolas, monospace; white-space: pre-wrap">' +
        'DOWN: db_*[prod]*&lt;b&gt;&amp;amp;`(1)` {{ 7*7 }}{% raw %}\nline 2</pre>',
    );
  });

  it('a title is one line', async () => {
    const { rendered } = await render(notifier('EMAIL', '{{ alert.kind }}\n  {{ alert.subject.name }}\r\n', null), message([down('db')]));
    expect(rendered.title).toBe('INCIDENT_OPENED db');
  });
});

describe('failures fall back to the default message and say why', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['an unknown filter', '{{ alert.subject.name | shout }}', /^bodyTemplate: undefined filter: shout/],
    ['an error while rendering', '{{ alert.subject.name | url_decode }}', /^bodyTemplate: URI malformed/],
    [
      'a loop that would run for hours',
      '{% assign r = (1..100) %}{% for a in r %}{% for b in r %}{% for c in r %}{% for d in r %}x{% endfor %}{% endfor %}{% endfor %}{% endfor %}',
      /^bodyTemplate: template render limit exceeded/,
    ],
    ['a loop over too much', '{% for a in (1..100000000) %}x{% endfor %}', /^bodyTemplate: memory alloc limit exceeded/],
    ['a file read', '{% include "/etc/passwd" %}', /^bodyTemplate: \{% include %\} is not available: templates cannot read files/],
    ['nothing', '{% if false %}x{% endif %}', /^bodyTemplate: rendered nothing$/],
    ['too much', `{% for a in (1..400) %}${'x'.repeat(100)}{% endfor %}`, /^bodyTemplate: rendered 40000 characters, more than 32768$/],
  ];
  for (const [what, body, why] of cases) {
    it(what, async () => {
      const m = message([down('50%off')]);
      const { rendered, templateError } = await render(notifier('SLACK', 'T {{ alert.subject.name }}', body), m);
      expect(templateError).toMatch(why);
      expect(rendered).toEqual(renderMessage(m, { publicUrl: PUBLIC, now: NOW, notifierName: 'ops' }));
    });
  }

  it('names the title template when it is the one that fails', async () => {
    const { templateError } = await render(notifier('WEBHOOK', '{{ "%" | url_decode }}', 'fine'), message([down('db')]));
    expect(templateError).toMatch(/^titleTemplate: URI malformed/);
  });
});

describe('parse checks at create and PATCH', () => {
  it('parseProblem gives Liquid’s message, or nothing for a good template', () => {
    expect(parseProblem('{{ alert.subject.name | upcase }}')).toBeUndefined();
    expect(parseProblem('{% if alert %}')).toMatch(/tag \{% if alert %\} not closed/);
    expect(parseProblem('{{ x | nope }}')).toMatch(/undefined filter: nope/);
    expect(parseProblem('{% render "x" %}')).toMatch(/cannot read files/);
    expect(parseProblem('  ')).toMatch(/empty/);
  });

  it('checkTemplates is a 400 naming each template that does not parse', () => {
    expect(() => checkTemplates({ titleTemplate: 'ok', bodyTemplate: null })).not.toThrow();
    try {
      checkTemplates({ titleTemplate: '{{ a | nope }}', bodyTemplate: '{% for %}' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(HttpError);
      expect((err as HttpError).status).toBe(400);
      expect((err as HttpError).errors?.map((e) => e.field)).toEqual(['titleTemplate', 'bodyTemplate']);
    }
  });
});

describe('samples', () => {
  it('renders every kind as the real alert would be, marked as a test', () => {
    for (const kind of [
      'INCIDENT_OPENED',
      'INCIDENT_RESOLVED',
      'AGENT_DOWN',
      'AGENT_UP',
      'CERT_EXPIRING',
      'CERT_RENEWAL_FAILED',
    ] as const) {
      const sample = testMessage('msg_s', kind, NOW);
      expect(sample).toMatchObject({ test: true, items: [{ kind }] });
      const real = renderMessage({ ...sample, test: false }, { now: NOW });
      const r = renderMessage(sample, { now: NOW });
      expect(r.title, kind).toBe(`Test: ${real.title}`);
      expect(r.text.startsWith(real.text)).toBe(true);
      expect(r.text).toMatch(/sample alert sent as a test/);
    }
    expect(sampleItem('INCIDENT_OPENED', NOW).subject.name).toBe('example-api');
    expect(testMessage('msg_p', undefined, NOW).items).toEqual([]);
  });
});
