import type { DaemonContext } from '../../context.ts';
import { accountKey, newKey } from './account.ts';
import type { AcmeChallenges } from './challenges.ts';

export type ChallengeType = 'http-01' | 'tls-alpn-01';

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
  #client: Promise<{ lib: AcmeLib; client: InstanceType<AcmeLib['Client']> }> | undefined;

  constructor(ctx: DaemonContext, challenges: AcmeChallenges) {
    this.#ctx = ctx;
    this.#challenges = challenges;
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
        if (type === 'http-01') return this.#challenges.putHttp01(name, challenge.token, keyAuthorization);
        const [alpnKey, alpnCert] = await lib.crypto.createAlpnCertificate(authz, keyAuthorization, newKey());
        return this.#challenges.putAlpn(name, keyAuthorization, alpnCert.toString(), alpnKey.toString());
      },
      challengeRemoveFn: (_authz, challenge) => this.#challenges.remove(challenge.type, name, challenge.token),
    });
    return { chainPem, keyPem, challenge: used ?? types[0] };
  }
}
