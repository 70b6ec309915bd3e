import { createHash, X509Certificate } from 'node:crypto';
import type { Server as TlsServer } from 'node:tls';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '../logger.ts';
import { fetchOcspResponse } from './ocsp-fetch.ts';
import { type OcspAnswer, ocspSubject, type OcspSubject, ocspUrl, readOcspResponse } from './ocsp-message.ts';

/** A failed fetch is retried after a minute, doubling, never later than the refresh period. */
const RETRY_MS = 60_000;
/** Never sooner than this between two fetches for one certificate, whatever the settings. */
const MIN_REFRESH_MS = 1_000;
/** An answer without nextUpdate is stapled for this long at most. */
const NO_NEXT_UPDATE_MS = 7 * 24 * 3_600_000;
/** Certificates followed at once; the least recently served goes first. One not served for a day is dropped. */
const MAX_ENTRIES = 10_000;
const IDLE_MS = 24 * 3_600_000;
const MAX_CONCURRENT_FETCHES = 4;

const STATUS_MESSAGES = {
  good: 'OCSP: stapling the response',
  revoked: 'OCSP: the certificate is revoked; stapling the revocation',
  unknown: 'OCSP: the responder does not know this certificate; not stapling',
};

interface Entry {
  id: string;
  /** The status of the last answer. */
  status?: OcspAnswer['status'];
  subject?: OcspSubject;
  label: string;
  staple?: { der: Buffer; answer: OcspAnswer; expiresAt: number };
  timer?: NodeJS.Timeout;
  failures: number;
  lastUsed: number;
}

export interface OcspStaplerOptions {
  log: Logger;
  registry: Registry;
  /** `--ocsp-refresh`: the longest a staple goes without a fresh fetch. */
  refreshMs: number;
}

/**
 * OCSP stapling for the daemon's TLS listeners. A handshake that asks for the
 * certificate status gets the cached response of the certificate it is served,
 * or none: it never waits on the responder. The first such handshake of a
 * certificate with an OCSP URL (Authority Information Access) starts fetching
 * in the background; the answer, checked as a client would, is refreshed
 * halfway to its nextUpdate (at most `refreshMs` apart) while the certificate
 * is served. Certificates without an OCSP URL are remembered as such: nothing
 * is fetched for them.
 */
export class OcspStapler {
  readonly #log: Logger;
  readonly #refreshMs: number;
  readonly #entries = new Map<string, Entry>();
  readonly #waiting: Entry[] = [];
  readonly #fetches: Counter;
  readonly #controllers = new Set<AbortController>();
  #running = 0;
  #closed = false;

  constructor(opts: OcspStaplerOptions) {
    this.#log = opts.log;
    this.#refreshMs = Math.max(MIN_REFRESH_MS, opts.refreshMs);
    this.#fetches = new Counter({
      name: 'monctl_tls_ocsp_fetches_total',
      help: 'OCSP responses fetched for stapling, by outcome (good, revoked, unknown, failed)',
      labelNames: ['result'],
      registers: [opts.registry],
    });
    const entries = this.#entries;
    new Gauge({
      name: 'monctl_tls_ocsp_stapled_certificates',
      help: 'Certificates with a current OCSP response to staple',
      registers: [opts.registry],
      collect() {
        const now = Date.now();
        this.set([...entries.values()].filter((e) => e.staple && e.staple.expiresAt > now).length);
      },
    });
  }

  /** Staples on every handshake of `server` that asks for it (node's `OCSPRequest` event, SNI contexts included). */
  attach(server: TlsServer): void {
    server.on('OCSPRequest', (certificate: Buffer | null, issuer: Buffer | null, done: (err: Error | null, response?: Buffer) => void) => {
      done(null, certificate ? this.staple(certificate, issuer) : undefined);
    });
  }

  /** The response to staple for this certificate now, if one is current; starts following it otherwise. */
  staple(certificate: Buffer, issuer: Buffer | null): Buffer | undefined {
    const id = createHash('sha256').update(certificate).digest('base64url');
    const now = Date.now();
    let entry = this.#entries.get(id);
    if (entry) {
      // Most recently served last: the map's order is the eviction order.
      this.#entries.delete(id);
      this.#entries.set(id, entry);
    } else {
      entry = this.#follow(id, certificate, issuer);
    }
    entry.lastUsed = now;
    return entry.staple && entry.staple.expiresAt > now ? entry.staple.der : undefined;
  }

  close(): void {
    this.#closed = true;
    for (const entry of this.#entries.values()) clearTimeout(entry.timer);
    for (const controller of this.#controllers) controller.abort();
    this.#entries.clear();
    this.#waiting.length = 0;
  }

  #follow(id: string, certificate: Buffer, issuer: Buffer | null): Entry {
    const entry: Entry = { id, label: id, failures: 0, lastUsed: Date.now() };
    try {
      if (issuer) entry.subject = ocspSubject(certificate, issuer);
      else if (ocspUrl(new X509Certificate(certificate))) {
        this.#log.warn(
          { certificate: id },
          'OCSP: the certificate names a responder but its chain has no issuer certificate; not stapling (serve the full chain)',
        );
      }
    } catch (err) {
      this.#log.warn({ certificate: id, error: (err as Error).message }, 'OCSP: cannot build the request; not stapling');
    }
    if (entry.subject) entry.label = `${entry.subject.url} serial ${Buffer.from(entry.subject.certId.serialNumber).toString('hex')}`;
    if (this.#entries.size >= MAX_ENTRIES) this.#drop(this.#entries.values().next().value!);
    this.#entries.set(id, entry);
    if (entry.subject) this.#queue(entry);
    return entry;
  }

  #drop(entry: Entry): void {
    clearTimeout(entry.timer);
    this.#entries.delete(entry.id);
  }

  #schedule(entry: Entry, ms: number): void {
    clearTimeout(entry.timer);
    entry.timer = setTimeout(
      () => {
        entry.timer = undefined;
        if (Date.now() - entry.lastUsed > IDLE_MS) return this.#drop(entry);
        this.#queue(entry);
      },
      Math.max(MIN_REFRESH_MS, ms),
    );
    entry.timer.unref();
  }

  #queue(entry: Entry): void {
    if (this.#closed || this.#waiting.includes(entry)) return;
    this.#waiting.push(entry);
    this.#next();
  }

  #next(): void {
    while (this.#running < MAX_CONCURRENT_FETCHES && this.#waiting.length > 0) {
      const entry = this.#waiting.shift()!;
      if (this.#entries.get(entry.id) !== entry) continue;
      this.#running++;
      void this.#refresh(entry).finally(() => {
        this.#running--;
        this.#next();
      });
    }
  }

  async #refresh(entry: Entry): Promise<void> {
    const subject = entry.subject!;
    let der: Buffer;
    let answer: OcspAnswer;
    try {
      der = await this.#fetch(subject);
      answer = readOcspResponse(der, subject);
    } catch (err) {
      if (this.#closed) return;
      entry.failures++;
      this.#fetches.inc({ result: 'failed' });
      const retryMs = Math.min(this.#refreshMs, RETRY_MS * 2 ** Math.min(entry.failures - 1, 6));
      this.#log.warn(
        {
          certificate: entry.label,
          error: (err as Error).message,
          failures: entry.failures,
          retryInMs: retryMs,
          stapling: entry.staple ? 'the previous response until its nextUpdate' : 'nothing',
        },
        'OCSP: fetching the response failed',
      );
      return this.#schedule(entry, retryMs);
    }
    if (this.#closed) return;
    this.#fetches.inc({ result: answer.status });
    const changed = entry.status !== answer.status || entry.failures > 0;
    entry.failures = 0;
    entry.status = answer.status;
    const now = Date.now();
    // The unknown status is not stapled: a client would fail on it, as on no answer at all.
    entry.staple =
      answer.status === 'unknown' ? undefined : { der, answer, expiresAt: answer.nextUpdate ?? answer.thisUpdate + NO_NEXT_UPDATE_MS };
    const details = {
      certificate: entry.label,
      status: answer.status,
      nextUpdate: answer.nextUpdate && new Date(answer.nextUpdate).toISOString(),
    };
    // Logged when the status changes (or fetching recovers); every refresh at debug level.
    const level = !changed ? 'debug' : answer.status === 'revoked' ? 'error' : answer.status === 'unknown' ? 'warn' : 'info';
    this.#log[level](details, STATUS_MESSAGES[answer.status]);
    const halfway = answer.nextUpdate === undefined ? Infinity : answer.thisUpdate + (answer.nextUpdate - answer.thisUpdate) / 2 - now;
    this.#schedule(entry, Math.min(this.#refreshMs, halfway));
  }

  async #fetch(subject: OcspSubject): Promise<Buffer> {
    const controller = new AbortController();
    this.#controllers.add(controller);
    try {
      return await fetchOcspResponse(subject.url, subject.request, controller.signal);
    } finally {
      this.#controllers.delete(controller);
    }
  }
}
