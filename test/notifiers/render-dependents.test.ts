import { expect, it } from 'vitest';
import { renderMessage } from '../../daemon/alerts/notifiers/render.ts';
import type { AlertItem, OutgoingMessage } from '../../daemon/alerts/types.ts';

/**
 * "and N dependent resources" in the default message (docs/API.md#dependencies): the
 * dependency's line names the dependents held back because of it, at most 20, the rest counted.
 */
const NOW = Date.UTC(2026, 10, 28, 9, 0, 0);
const down = (id: number, name: string, dependents?: AlertItem['dependents']): AlertItem => ({
  kind: 'INCIDENT_OPENED',
  eventId: id,
  at: NOW,
  reminder: false,
  incidentId: id,
  subject: { type: 'resource', id, name, target: `127.0.0.1:${5400 + id}` },
  openedAt: NOW - 60_000,
  resolvedAt: null,
  cause: { message: 'Connection refused', errorCode: 'ECONNREFUSED' },
  cert: null,
  severity: 'critical',
  ...(dependents ? { dependents } : {}),
});
const names = Array.from({ length: 20 }, (_, i) => `api-${i + 1}`);
const render = (items: AlertItem[]) => renderMessage({ id: 'msg_1', items, test: false } satisfies OutgoingMessage, { now: NOW });

it('one alert: a line naming the dependents, the rest counted', () => {
  const text = render([down(1, 'orders-db', { count: 25, names })]).text;
  expect(text).toContain(`…and 25 dependent resources (${names.join(', ')}, … and 5 more): their alerts are held back.`);
  expect(render([down(1, 'orders-db', { count: 1, names: ['api-1'] })]).text).toContain('and 1 dependent resource (api-1)');
  expect(render([down(1, 'orders-db')]).text).not.toContain('dependent');
});

it("a grouped message: on the dependency's line", () => {
  const text = render([down(1, 'orders-db', { count: 2, names: ['api-1', 'api-2'] }), down(2, 'cache')]).text;
  expect(text).toMatch(/- orders-db \(127\.0\.0\.1:5401\): .*, and 2 dependent resources \(api-1, api-2\)\n/);
  expect(text).toMatch(/- cache \(127\.0\.0\.1:5402\): [^\n]*down for 1 min$/m);
});
