import type { AcmeChallengeType } from '../../config/values.ts';
import type { DaemonContext } from '../../context.ts';
import { accountKey, newKey } from './account.ts';
import type { AcmeChallenges } from './challenges.ts';
import { DnsUpdater } from './dns/rfc2136.ts';

export type ChallengeType = AcmeChallengeType;

export interface Issued {
  chainPem: string;
  keyPem: string;
  challenge: ChallengeType;
}

type AcmeLib = typeof import('acme-client');

/**
 * One ACME client for the daemon (acme-client, loaded only when ACME is on:
 * it brings axios and node-forge). Orders a certificate for one name with a
 * fresh P-256 key, answering the first challenge type of `types` that the
 * server offers.
 */
export class AcmeOrders {
  readonly #ctx: DaemonContext;
  readonly #challenges: AcmeChallenges;
  readonly #dns: DnsUpdater | undefined;
  #client: Promise<{ lib: AcmeLib; client: InstanceType<AcmeLib['Client']> }> | undefined;

  constructor(ctx: DaemonContext, challenges: AcmeChallenges) {
    this.#ctx = ctx;
    this.#challenges = challenges;
    const dnsUpdate = ctx.config.acme?.dnsUpdate;
    this.#dns = dnsUpdate && new DnsUpdater(dnsUpdate);
  }

  #connect() {
    this.#client ??= (async () => {
      // A CommonJS package: module.exports is the default export, bundled (esbuild) or not.
      const loaded = (await import('acme-client')) as AcmeLib & { default?: AcmeLib };
      const lib = loaded.default ?? loaded;
      // Without a timeout a stalled ACME server would hold the claim until it lapses.
      lib.axios.defaults.timeout = 30_000;
      lib.setLogger((message) => this.#ctx.log.debug({ acme: message }, 'acme'));
      const client = new lib.Client({
        directoryUrl: this.#ctx.config.acme!.directory,
        accountKey: await accountKey(this.#ctx),
        // Poll the order from 1 s on (acme-client's 5 s would add seconds to every issuance), doubling to 30 s.
        backoffMin: 1_000,
        backoffMax: 30_000,
      });
      return { lib, client };
    })().catch((err: unknown) => {
      this.#client = undefined;
      throw err;
    });
    return this.#client;
  }

  async order(name: string, types: ChallengeType[]): Promise<Issued> {
    const { lib, client } = await this.#connect();
    const keyPem = newKey();
    const [, csr] = await lib.crypto.createCsr({ commonName: name, altNames: [name] }, keyPem);
    let used: ChallengeType | undefined;
    const email = this.#ctx.config.acme!.email;
    const chainPem = await client.auto({
      csr,
      termsOfServiceAgreed: true,
      ...(email ? { email } : {}),
      challengePriority: types,
      // The validator, not this daemon, resolves the name: a pre-check from here proves nothing.
      skipChallengeVerification: true,
      challengeCreateFn: async (authz, challenge, keyAuthorization) => {
        const type = challenge.type as ChallengeType;
        if (!types.includes(type)) throw new Error(`the ACME server offers none of the challenge types ${types.join(', ')} for ${name}`);
        used = type;
        // For a wildcard the authorization is of the base name (`*.apps.test` is validated at _acme-challenge.apps.test).
        if (type === 'dns-01') return this.#dnsRecord(authz.identifier.value).add(keyAuthorization);
        if (type === 'http-01') return this.#challenges.putHttp01(name, challenge.token, keyAuthorization);
        const [alpnKey, alpnCert] = await lib.crypto.createAlpnCertificate(authz, keyAuthorization, newKey());
        return this.#challenges.putAlpn(name, keyAuthorization, alpnCert.toString(), alpnKey.toString());
      },
      challengeRemoveFn: async (authz, challenge, keyAuthorization) => {
        try {
          if (challenge.type === 'dns-01') await this.#dnsRecord(authz.identifier.value).remove(keyAuthorization);
          else await this.#challenges.remove(challenge.type, name, challenge.token);
        } catch (err) {
          // The order goes on (acme-client ignores it); the operator learns of the record left behind.
          this.#ctx.log.warn({ err, hostname: name, challenge: challenge.type }, 'acme: removing a challenge answer failed');
        }
      },
    });
    return { chainPem, keyPem, challenge: used ?? types[0] };
  }

  /** The DNS-01 record of a name: add and remove its `_acme-challenge` TXT value. */
  #dnsRecord(base: string) {
    const dns = this.#dns;
    if (!dns) throw new Error('DNS-01 needs --acme-dns-rfc2136');
    const name = `_acme-challenge.${base}`;
    return { add: (value: string) => dns.add(name, value), remove: (value: string) => dns.remove(name, value) };
  }
}
