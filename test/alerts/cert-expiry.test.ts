import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';
import { checkNow, httpResource, outbox, readDb } from './helpers.ts';

/** A real HTTPS target whose certificate expires in three days, checked by a daemon that trusts its CA. */
describe('certificate expiry', () => {
  let pki: TestPki;
  let server: Server;
  let url: string;
  let d: TestDaemon;
  let notAfter: number;

  beforeAll(async () => {
    pki = makePki();
    const cert = pki.issue('short-lived', 1, 3);
    server = createServer({ cert: cert.cert, key: cert.key }, (_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const { X509Certificate } = await import('node:crypto');
    notAfter = Date.parse(new X509Certificate(cert.cert).validTo);
    d = await startDaemon({ args: ['--scheduler', 'off'], env: { NODE_EXTRA_CA_CERTS: pki.caFile } });
  });
  afterAll(async () => {
    await d?.stop();
    await new Promise((r) => {
      server?.closeAllConnections();
      server?.close(r);
    });
    pki?.cleanup();
  });

  it('records notAfter and fires CERT_EXPIRING once, for the smallest threshold crossed (7 of 14,7,1)', async () => {
    const id = await httpResource(d, 'short-cert', url, { severity: 'warning' });
    expect((await checkNow(d, id)).status).toBe('AVAILABLE');
    const [row] = await readDb<{ cert_expires_at: number; cert_alerted_days: number }>(
      d,
      'SELECT cert_expires_at, cert_alerted_days FROM resources WHERE id = ?',
      id,
    );
    expect(row).toEqual({ cert_expires_at: notAfter, cert_alerted_days: 7 });
    let events = await outbox(d, 'resource_id = ?', id);
    expect(events.map((e) => e.kind)).toEqual(['CERT_EXPIRING']);
    expect(JSON.parse(events[0].payload)).toMatchObject({
      cert: { notAfter, thresholdDays: 7 },
      subject: { type: 'resource', id, target: url },
      severity: 'warning', // the resource's, frozen into the event (docs/API.md#severity)
    });
    await checkNow(d, id);
    events = await outbox(d, 'resource_id = ?', id);
    expect(events).toHaveLength(1);
    const detail = await d.admin.call(operations.getAdminResource, { params: { id } });
    expect(detail.certExpiresAt).toBe(new Date(notAfter).toISOString().slice(0, 19));
  });
});
