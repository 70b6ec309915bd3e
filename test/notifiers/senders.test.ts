import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSender, recordAttempt } from '../../daemon/alerts/notifiers/senders.ts';
import type { AlertItem, OutgoingMessage } from '../../daemon/alerts/types.ts';
import { defaultDaemonConfig } from '../../daemon/config/daemon-config.ts';
import { type RunningDaemon, startDaemon } from '../../daemon/daemon.ts';
import { ApiClient } from '../../src/client/api-client.ts';
import { operations } from '../../src/api/operations.ts';
import { type Receiver, startReceiver, startSlackReceiver, startWebhookReceiver } from './receivers.ts';

/**
 * The seam the dispatcher uses, called in-process on a real daemon: loadSender
 * and send of a grouped message (as the dispatcher will hand it over) to real
 * receivers, the same webhook-id on every retry, an abort that ends a send at
 * once, and recordAttempt rows read back through the API.
 */
const base = mkdtempSync(join(tmpdir(), 'monctl-senders-'));
let daemon: RunningDaemon;
let admin: ApiClient;
const receivers: Receiver[] = [];
const PUBLIC = 'https://monctl.example.test';

beforeAll(async () => {
  process.env.MONCTL_ADMIN_PASSWORD ??= 'in-process-admin-password';
  daemon = await startDaemon(
    defaultDaemonConfig({
      listen: { host: '127.0.0.1', port: 0 },
      edgeListen: { host: '127.0.0.1', port: 0 },
      dataDir: join(base, 'data'),
      logLevel: 'silent',
      sseHeartbeatMs: 15_000,
      checkResponses: true,
      publicUrl: PUBLIC,
      notifierTimeoutMs: 2_000,
    }),
  );
  const { readFileSync } = await import('node:fs');
  admin = new ApiClient({
    server: daemon.apiUrl,
    credential: { kind: 'api-key', token: readFileSync(join(base, 'data', 'admin-api-key'), 'utf8').trim() },
  });
});
afterAll(async () => {
  await daemon?.stop();
  await Promise.all(receivers.map((r) => r.close()));
  rmSync(base, { recursive: true, force: true });
});

const NOW = Date.now();
function down(i: number): AlertItem {
  return {
    kind: 'INCIDENT_OPENED',
    severity: 'critical',
    eventId: 100 + i,
    at: NOW,
    reminder: false,
    incidentId: 500 + i,
    subject: { type: 'resource', id: i, name: `svc-${i}`, target: `https://svc-${i}.example.test/` },
    openedAt: NOW - 90_000,
    resolvedAt: null,
    cause: { message: 'connect ECONNREFUSED', errorCode: 'CONNECTION_ERROR' },
    cert: null,
  };
}
const grouped = (n: number): OutgoingMessage => ({
  id: `msg_group_${n}`,
  items: Array.from({ length: n }, (_, i) => down(i + 1)),
  test: false,
});

describe('loadSender', () => {
  it('is undefined for a notifier that does not exist', async () => {
    expect(await loadSender(daemon.ctx, 987654)).toBeUndefined();
  });

  it('sends a grouped message to a webhook: signed, the structured items in data, the same webhook-id on a retry', async () => {
    let secret = '';
    const receiver = await startWebhookReceiver(() => secret);
    receivers.push(receiver);
    receiver.queue(503);
    const n = await admin.call(operations.createNotifier, { body: { name: 'group-hook', type: 'WEBHOOK', config: { url: receiver.url } } });
    secret = n.signingSecret!;
    const sender = (await loadSender(daemon.ctx, n.id))!;
    expect(sender.notifier).toEqual({ id: n.id, name: 'group-hook', type: 'WEBHOOK', enabled: true });
    const message = grouped(25);
    const first = await sender.send(message, new AbortController().signal);
    expect(first).toMatchObject({ ok: false, statusCode: 503, retryable: true });
    await recordAttempt(daemon.ctx.db, { notifierId: n.id, notificationId: 77, messageId: message.id, attempt: 1, ...first });
    const second = await sender.send(message, new AbortController().signal);
    expect(second).toMatchObject({ ok: true, statusCode: 204 });
    await recordAttempt(daemon.ctx.db, { notifierId: n.id, notificationId: 77, messageId: message.id, attempt: 2, ...second });

    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([message.id, message.id]);
    expect(receiver.verified).toHaveLength(1);
    const { data } = receiver.verified[0] as { data: Record<string, any> };
    expect(data).toMatchObject({
      messageId: message.id,
      test: false,
      title: '25 resources down',
      link: `${PUBLIC}/admin/api/incidents`,
      summary: { down: 25 },
    });
    expect(data.text).toMatch(/^25 resources down: svc-1, svc-2, .*svc-20, … and 5 more\n/);
    expect(data.items).toHaveLength(25);
    expect(data.items[0]).toEqual({
      eventId: 101,
      kind: 'INCIDENT_OPENED',
      severity: 'critical',
      at: new Date(NOW).toISOString(),
      reminder: false,
      subject: { type: 'resource', id: 1, name: 'svc-1', target: 'https://svc-1.example.test/' },
      incidentId: 501,
      openedAt: new Date(NOW - 90_000).toISOString(),
      resolvedAt: null,
      durationSeconds: expect.any(Number),
      cause: { message: 'connect ECONNREFUSED', errorCode: 'CONNECTION_ERROR' },
      cert: null,
      link: `${PUBLIC}/admin/api/incidents/501`,
    });

    const attempts = await admin.call(operations.listNotifierDeliveries, { params: { id: n.id } });
    expect(attempts.map((a) => [a.notificationId, a.messageId, a.attempt, a.ok, a.statusCode])).toEqual([
      [77, message.id, 2, true, 204],
      [77, message.id, 1, false, 503],
    ]);
  });

  it('Slack gets the grouped text', async () => {
    const receiver = await startSlackReceiver('/hook');
    receivers.push(receiver);
    const n = await admin.call(operations.createNotifier, {
      body: { name: 'group-slack', type: 'SLACK', config: { url: `${receiver.url}/hook` } },
    });
    const outcome = await (await loadSender(daemon.ctx, n.id))!.send(grouped(3), new AbortController().signal);
    expect(outcome.ok).toBe(true);
    expect(receiver.texts[0].split('\n').slice(0, 2)).toEqual(['3 resources down', '3 resources down: svc-1, svc-2, svc-3']);
  });

  it('an abort from the caller ends a send at once, as a retryable failure', async () => {
    const receiver = await startReceiver(() => ({ status: 0 }));
    receivers.push(receiver);
    const n = await admin.call(operations.createNotifier, { body: { name: 'stuck', type: 'SLACK', config: { url: receiver.url } } });
    const sender = (await loadSender(daemon.ctx, n.id))!;
    const stop = new AbortController();
    const pending = sender.send(grouped(1), stop.signal);
    while (receiver.received.length === 0) await new Promise((r) => setTimeout(r, 10));
    stop.abort();
    expect(await pending).toMatchObject({ ok: false, retryable: true, error: 'aborted' });
  });
});
