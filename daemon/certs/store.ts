import type { SecureContext } from 'node:tls';
import type { DaemonContext } from '../context.ts';
import { profiledContext } from '../http/tls-profile.ts';
import { CoalescedReload } from '../util/coalesced.ts';
import { certBox } from './box.ts';
import { wildcardOf } from './names.ts';
import { bestFor, type Candidate } from './rank.ts';

export interface Served extends Candidate {
  context: SecureContext;
  stamp: number;
}

/**
 * The certificates the HTTPS edge serves, in memory: one TLS context per
 * stored certificate, indexed by each of its names (wildcards under
 * `*.example.com`). Reloaded after every change on this daemon and once a
 * minute for the changes of others; a context is built again only when its
 * row changed.
 */
export class CertStore {
  readonly #ctx: DaemonContext;
  #byName = new Map<string, Served[]>();
  #byId = new Map<number, Served>();
  readonly #reload = new CoalescedReload(async () => {
    try {
      await this.#load();
    } catch (err) {
      if (!this.#ctx.draining) this.#ctx.log.error({ err }, 'certificates: loading failed; serving the previous ones');
    }
  });

  constructor(ctx: DaemonContext) {
    this.#ctx = ctx;
  }

  reload(): Promise<void> {
    return this.#reload.run();
  }

  get all(): Served[] {
    return [...this.#byId.values()];
  }

  /** The certificate to serve for an SNI name, if any covers it. */
  best(name: string, now = Date.now()): Served | undefined {
    const exact = this.#byName.get(name);
    const wildcard = wildcardOf(name);
    const wild = wildcard ? this.#byName.get(wildcard) : undefined;
    if (!wild) return exact && (exact.length === 1 ? exact[0] : bestFor(name, exact, now));
    return bestFor(name, exact ? [...exact, ...wild] : wild, now);
  }

  context(name: string): SecureContext | undefined {
    return this.best(name)?.context;
  }

  async #load(): Promise<void> {
    const rows = await this.#ctx.db
      .selectFrom('certificates')
      .select(['id', 'source', 'hostnames', 'cert_pem', 'key_enc', 'not_before', 'not_after', 'updated_at', 'issued_at'])
      .where('cert_pem', 'is not', null)
      .execute();
    const box = certBox(this.#ctx);
    const byId = new Map<number, Served>();
    for (const row of rows) {
      const id = Number(row.id);
      // issued_at changes with every new certificate of an ACME row; updated_at with everything else.
      const stamp = Number(row.issued_at ?? row.updated_at);
      const known = this.#byId.get(id);
      if (known && known.stamp === stamp) {
        byId.set(id, known);
        continue;
      }
      const key = row.key_enc ? box.open(row.key_enc) : undefined;
      if (!key) {
        this.#ctx.log.error({ certificate: id }, 'certificates: the key cannot be opened (another install secret?); not served');
        continue;
      }
      try {
        byId.set(id, {
          id,
          source: row.source,
          hostnames: JSON.parse(row.hostnames) as string[],
          notBefore: Number(row.not_before),
          notAfter: Number(row.not_after),
          context: profiledContext(this.#ctx.config.tlsProfile, { cert: row.cert_pem!, key }),
          stamp,
        });
      } catch (err) {
        this.#ctx.log.error({ certificate: id, error: (err as Error).message }, 'certificates: unusable; not served');
      }
    }
    const byName = new Map<string, Served[]>();
    for (const served of byId.values()) {
      for (const name of served.hostnames) byName.set(name, [...(byName.get(name) ?? []), served]);
    }
    this.#byId = byId;
    this.#byName = byName;
  }
}
