import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retryDelay } from '../../daemon/certs/acme/backoff.ts';
import { claimOrder } from '../../daemon/certs/acme/claim.ts';
import { type OutcomeDeps, recordFailed, recordIssued } from '../../daemon/certs/acme/outcome.ts';
import { openStore, type OpenedStore } from '../../daemon/store/store.ts';
import { makePki, type TestPki } from '../helpers/tls.ts';

/**
 * The database claim that keeps daemons sharing a database from ordering the
 * same name twice, against a real SQLite file: two daemons that read the same
 * due row race for it, one wins; one that read it before the other's order
 * finished stays out; after a failure nobody orders before the retry time.
 */
describe('ACME order claims', () => {
  let dir: string;
  let store: OpenedStore;
  let ctx: OutcomeDeps;
  let pki: TestPki;
  let id: number;
  const row = () => store.db.selectFrom('certificates').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'monctl-claims-'));
    store = await openStore(dir);
    pki = makePki('claims CA');
    ctx = { db: store.db, installSecret: new Uint8Array(32).fill(3) };
    const now = Date.now();
    id = (
      await store.db
        .insertInto('certificates')
        .values({
          source: 'ACME',
          acme_name: 'claimed.test',
          hostnames: '["claimed.test"]',
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
    pki?.cleanup();
  });

  it('lets exactly one of two daemons that read the row claim it, and keeps out one whose read is stale', async () => {
    const seenByA = await row();
    const seenByB = await row();
    const won = await Promise.all([claimOrder(store.db, seenByA, 'pod-a'), claimOrder(store.db, seenByB, 'pod-b')]);
    expect(won.filter(Boolean)).toHaveLength(1);
    const winner = won[0] ? 'pod-a' : 'pod-b';
    expect((await row()).claimed_by).toBe(winner);

    const pair = pki.issueNames('claimed', 51, ['claimed.test']);
    expect(await recordIssued(ctx, seenByA, winner, { chainPem: pair.cert, keyPem: pair.key, challenge: 'http-01' })).toBe(true);
    const issued = await row();
    expect(issued).toMatchObject({ claimed_by: null, failures: 0, challenge: 'http-01' });
    expect(issued.key_enc).not.toContain('PRIVATE KEY');
    // The loser read the row before the certificate was written: its view is stale, so no second order.
    expect(await claimOrder(store.db, seenByB, 'pod-b')).toBe(false);
    // A daemon that lost its claim cannot overwrite the outcome either.
    expect(await recordIssued(ctx, seenByA, 'pod-b', { chainPem: pair.cert, keyPem: pair.key, challenge: 'tls-alpn-01' })).toBe(false);
  });

  it('records a failure with its alert event, and no claim succeeds before the retry time', async () => {
    const now = Date.now();
    const current = await row();
    expect(await claimOrder(store.db, current, 'pod-a', now)).toBe(true);
    const next = await recordFailed(ctx, current, 'pod-a', 'urn:ietf:params:acme:error:connection: Connection refused');
    expect(next).toBeGreaterThanOrEqual(now + 60 * 60_000);
    const failed = await row();
    expect(failed).toMatchObject({
      failures: 1,
      claimed_by: null,
      last_error: 'urn:ietf:params:acme:error:connection: Connection refused',
    });
    const events = await store.db.selectFrom('alert_events').selectAll().where('kind', '=', 'CERT_RENEWAL_FAILED').execute();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ subject_type: 'certificate', resource_id: null, agent_id: null, routed_at: null });
    expect(JSON.parse(events[0].payload)).toMatchObject({
      subject: { type: 'certificate', id, name: 'claimed.test' },
      cert: { notAfter: Number(failed.not_after) },
    });

    expect(await claimOrder(store.db, failed, 'pod-b', now + 59 * 60_000)).toBe(false);
    expect(await claimOrder(store.db, failed, 'pod-b', Number(failed.next_attempt_at))).toBe(true);
  });

  it('backs off an hour after a failure, doubling to a day', () => {
    expect([1, 2, 3, 5, 6, 10].map((n) => retryDelay(n) / 3_600_000)).toEqual([1, 2, 4, 16, 24, 24]);
  });
});
