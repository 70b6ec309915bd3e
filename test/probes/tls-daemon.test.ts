import { X509Certificate } from 'node:crypto';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AlertWorld, eventually, itemsOf, startAlertWorld } from '../alerts/world.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';
import { startWebhookReceiver } from '../notifiers/receivers.ts';

/**
 * TLS resources through a real daemon that trusts the test CA by NODE_EXTRA_CA_CERTS: a mail
 * server checked by STARTTLS whose certificate expires in 2 days records certExpiresAt and sends
 * CERT_EXPIRING through a webhook notifier, as an HTTPS resource does.
 */
let pki: TestPki;
let w: AlertWorld;
let smtp: SMTPServer;
let target: string;
let notAfter: number;
let secret = '';
let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  pki = makePki('monctl tls daemon CA');
  const cert = pki.issue('mail', 1, 2);
  notAfter = Date.parse(new X509Certificate(cert.cert).validTo);
  smtp = new SMTPServer({ key: cert.key, cert: cert.cert, logger: false, authOptional: true });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
  target = `127.0.0.1:${(smtp.server.address() as { port: number }).port}`;
  hook = await startWebhookReceiver(() => secret);
  w = await startAlertWorld({ env: { NODE_EXTRA_CA_CERTS: pki.caFile } });
});

afterAll(async () => {
  await w?.d.stop();
  await w?.target.close();
  await hook?.close();
  await new Promise<void>((r) => (smtp ? smtp.close(() => r()) : r()));
  pki?.cleanup();
});

describe('TLS resources in the daemon', () => {
  it('STARTTLS to a mail server: AVAILABLE, certExpiresAt recorded, CERT_EXPIRING delivered through a notifier', async () => {
    const n = await w.notifier('cert-hook', 'WEBHOOK', { url: `${hook.url}/hook` });
    secret = n.signingSecret!;
    await w.rule({ name: 'certs', events: ['CERT_EXPIRING'], notifierIds: [n.id] });
    const r = await w.call('POST', '/api/resources', { name: 'mail', resourceType: 'TLS', target, tls: { starttls: 'smtp' } });
    const result = await w.call('POST', `/api/resources/${r.id}/check`);
    expect(result).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    const detail = await w.call('GET', `/admin/api/resources/${r.id}`);
    expect(detail).toMatchObject({
      resourceType: 'TLS',
      tls: { starttls: 'smtp', sni: null, minVersion: 'TLSv1.2' },
      certExpiresAt: new Date(notAfter).toISOString().slice(0, 19),
    });
    await eventually('the CERT_EXPIRING message', () => hook.verified.length > 0);
    const [item] = itemsOf(hook.verified[0]) as Array<ReturnType<typeof itemsOf>[number] & { cert: unknown }>;
    expect(item).toMatchObject({ kind: 'CERT_EXPIRING', subject: { name: 'mail' }, cert: { thresholdDays: 7 } });
    expect(hook.refused).toEqual([]);
  });

  it('a name the certificate does not list is TLS_ERROR; resources/test reports the conditions against what was seen', async () => {
    const r = await w.call('POST', '/api/resources', {
      name: 'wrong-name',
      resourceType: 'TLS',
      target,
      tls: { starttls: 'smtp', sni: 'mail.monctl.test' },
    });
    const result = await w.call('POST', `/api/resources/${r.id}/check`);
    expect(result).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'TLS_ERROR' });
    expect(result.message).toMatch(/^certificate not valid for the name: .*mail\.monctl\.test/);
    const tested = await w.call('POST', '/admin/api/resources/test', {
      resourceType: 'TLS',
      target,
      tls: { starttls: 'smtp', minVersion: 'TLSv1.3' },
      conditions: ['[TLS_VERSION] == TLSv1.3', '[CERTIFICATE_EXPIRATION] > 72h'],
    });
    expect(tested).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED' });
    expect(tested.report.conditions.map((c: { ok: boolean }) => c.ok)).toEqual([true, false]);
  });
});
