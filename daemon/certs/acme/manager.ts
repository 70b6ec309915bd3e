import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { Counter, Gauge } from 'prom-client';
import type { DaemonContext } from '../../context.ts';
import type { CertificateRow } from '../../store/schema.ts';
import { renewTime } from '../mappers.ts';
import { covers, normaliseCertName } from '../names.ts';
import type { CertStore } from '../store.ts';
import type { AcmeChallenges } from './challenges.ts';
import { claimOrder } from './claim.ts';
import { type ChallengeType, AcmeOrders } from './order.ts';
import { wildcardAcmeBlocker } from '../wildcard-acme.ts';
import { recordFailed, recordIssued, recordUnorderable } from './outcome.ts';

/** How often names and renewals are looked at (and on every route change of this daemon). */
const PASS_MS = 30_000;

/**
 * ACME for the HTTPS edge: every enabled HTTP route hostname (and status page
 * custom hostname) that no valid uploaded certificate covers gets a
 * certificate, renewed once `--acme-renew-at` of its lifetime has passed.
 * Each order is claimed in the database by a conditional update that also
 * checks the row is as this daemon read it, so several daemons never order
 * the same name twice; after a failure the name waits at least an hour.
 */
export class AcmeManager {
  readonly #ctx: DaemonContext;
  readonly #store: CertStore;
  readonly #orders: AcmeOrders;
  readonly #pod = `${randomUUID()}`;
  readonly #results: Counter<'result'>;
  #timer: NodeJS.Timeout | undefined;
  #soon: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;

  constructor(ctx: DaemonContext, store: CertStore, challenges: AcmeChallenges) {
    this.#ctx = ctx;
    this.#store = store;
    this.#orders = new AcmeOrders(ctx, challenges);
    const registers = [ctx.metrics.registry];
    this.#results = new Counter({
      name: 'monctl_acme_orders_total',
      help: 'ACME orders of this daemon, by result (issued, failed)',
      labelNames: ['result'] as const,
      registers,
    });
    const db = ctx.db;
    new Gauge({
      name: 'monctl_acme_certificates_failing',
      help: 'ACME certificates whose last order failed (lastError set)',
      registers,
      async collect() {
        const row = await db
          .selectFrom('certificates')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('source', '=', 'ACME')
          .where('last_error', 'is not', null)
          .executeTakeFirst();
        this.set(Number(row?.n ?? 0));
      },
    });
  }

  start(): void {
    this.soon();
    this.#timer = setInterval(() => this.soon(), PASS_MS);
    this.#timer.unref();
  }

  /** A pass shortly (route changes come in bursts). */
  soon(): void {
    if (this.#stopped || this.#soon) return;
    this.#soon = setTimeout(() => {
      this.#soon = undefined;
      void this.run();
    }, 100);
    this.#soon.unref();
  }

  /** One pass now (or once more after the one under way). */
  run(): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      do {
        this.#again = false;
        try {
          await this.#pass();
        } catch (err) {
          if (!this.#stopped) this.#ctx.log.error({ err }, 'acme: pass failed');
        }
      } while (this.#again && !this.#stopped);
    })().finally(() => (this.#running = undefined));
    return this.#running;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    clearTimeout(this.#soon);
    await this.#running;
  }

  /**
   * Challenge types this daemon can answer for a name, in the configured
   * order. A wildcard can only be validated by DNS-01 (RFC 8555 §7.1.3), so
   * it takes dns-01 whenever --acme-dns-rfc2136 is set, listed or not.
   */
  #types(name: string): ChallengeType[] {
    const acme = this.#ctx.config.acme!;
    if (name.startsWith('*.')) return acme.dnsUpdate ? ['dns-01'] : [];
    return acme.challenges.filter(
      (t) => t === 'http-01' || (t === 'tls-alpn-01' ? this.#ctx.config.edgeTlsListen !== undefined : acme.dnsUpdate !== undefined),
    );
  }

  /** The names that need an ACME certificate: route and status page hostnames no valid upload covers. */
  async #wanted(now: number): Promise<string[]> {
    const [routes, pages, uploads] = await Promise.all([
      this.#ctx.db.selectFrom('routes').select('hostname').where('enabled', '=', 1).where('type', '=', 'HTTP').execute(),
      this.#ctx.db.selectFrom('status_pages').select('custom_hostname').where('custom_hostname', 'is not', null).execute(),
      this.#ctx.db.selectFrom('certificates').select(['hostnames', 'not_after']).where('source', '=', 'UPLOAD').execute(),
    ]);
    const covered = uploads.filter((u) => Number(u.not_after) > now).flatMap((u) => JSON.parse(u.hostnames) as string[]);
    const names = new Set<string>();
    for (const raw of [...routes.map((r) => r.hostname), ...pages.map((p) => p.custom_hostname)]) {
      const name = raw && normaliseCertName(raw);
      if (!name || isIP(name) || covered.some((c) => covers(c, name))) continue;
      names.add(name);
    }
    return [...names].sort();
  }

  async #pass(): Promise<void> {
    const now = Date.now();
    const names = await this.#wanted(now);
    if (names.length === 0) return;
    const db = this.#ctx.db;
    for (const name of names) {
      await db
        .insertInto('certificates')
        .values({
          source: 'ACME',
          acme_name: name,
          hostnames: JSON.stringify([name]),
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) => oc.column('acme_name').doNothing())
        .execute();
    }
    const rows = await db.selectFrom('certificates').selectAll().where('acme_name', 'in', names).orderBy('id').execute();
    for (const row of rows) {
      if (this.#stopped) return;
      const name = row.acme_name!;
      const types = this.#types(name);
      if (types.length === 0) await this.#unorderable(row, name);
      else if (this.#due(row, Date.now())) await this.#renew(row, types);
    }
  }

  /** A name no configured challenge can validate: said on its row (FAILED) and in the log, and no order sent. */
  async #unorderable(row: CertificateRow, name: string): Promise<void> {
    const error =
      (name.startsWith('*.') && wildcardAcmeBlocker(this.#ctx.config)) ||
      `--acme-challenges lists no challenge type this daemon can answer (tls-alpn-01 needs --edge-tls-listen, dns-01 needs --acme-dns-rfc2136)`;
    if (await recordUnorderable(this.#ctx, row, error)) this.#ctx.log.error({ hostname: name }, `acme: ${error}`);
  }

  #due(row: CertificateRow, now: number): boolean {
    if (row.next_attempt_at !== null && Number(row.next_attempt_at) > now) return false;
    if (row.claimed_until !== null && Number(row.claimed_until) > now) return false;
    if (row.cert_pem === null || row.not_before === null || row.not_after === null) return true;
    return now >= renewTime(Number(row.not_before), Number(row.not_after), this.#ctx.config.acmeRenewAt);
  }

  /** Claims the row as read (a daemon that got there first changed it), orders, records the outcome. */
  async #renew(row: CertificateRow, types: ChallengeType[]): Promise<void> {
    const now = Date.now();
    const claim = `${this.#ctx.pod.name}:${this.#pod}:${now}`;
    if (!(await claimOrder(this.#ctx.db, row, claim, now))) return;
    const name = row.acme_name!;
    this.#ctx.log.info({ hostname: name, renewal: row.cert_pem !== null }, 'acme: ordering a certificate');
    try {
      const issued = await this.#orders.order(name, types);
      if (await recordIssued(this.#ctx, row, claim, issued)) {
        this.#results.inc({ result: 'issued' });
        this.#ctx.log.info({ hostname: name, challenge: issued.challenge }, 'acme: certificate issued');
        await this.#store.reload();
      }
    } catch (err) {
      const message = (err as Error).message || String(err);
      this.#results.inc({ result: 'failed' });
      const next = await recordFailed(this.#ctx, row, claim, message);
      this.#ctx.log.warn({ hostname: name, error: message, nextAttemptAt: next && new Date(next).toISOString() }, 'acme: order failed');
    }
  }
}
