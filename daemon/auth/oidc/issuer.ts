import * as client from 'openid-client';
import { HttpError } from '../../../src/errors.ts';
import type { OidcConfig } from '../../config.ts';
import { insecureAllowed } from '../../config/identity-settings.ts';
import type { Logger } from '../../logger.ts';

/** A failed discovery is tried again after this long, not on every sign-in (a down provider is not hammered). */
const RETRY_AFTER_MS = 15_000;
const TIMEOUT_SECONDS = 10;

/**
 * The OpenID provider of the daemon's single sign-on (`--oidc-issuer`):
 * its metadata found once through discovery (openid-client, a certified
 * relying party) and shared by the login page, `monctl login --sso` and
 * the sign-in in front of routes. Discovery runs at the first use, so a
 * provider that is down at start delays nothing but sign-ins.
 */
export class OidcIssuer {
  readonly settings: OidcConfig;
  readonly #log: Logger;
  #config: Promise<client.Configuration> | undefined;
  #failedAt = 0;

  constructor(settings: OidcConfig, log: Logger) {
    this.settings = settings;
    this.#log = log;
  }

  /** The provider's configuration; 503 `sso-unavailable` while discovery fails. */
  async configuration(now = Date.now()): Promise<client.Configuration> {
    if (!this.#config && now - this.#failedAt < RETRY_AFTER_MS) throw this.#unavailable('discovery failed a moment ago');
    this.#config ??= this.#discover().catch((err: unknown) => {
      this.#config = undefined;
      this.#failedAt = Date.now();
      this.#log.warn({ err, issuer: this.settings.issuer }, 'OpenID discovery failed');
      throw this.#unavailable((err as Error).message);
    });
    return this.#config;
  }

  /** Whether the provider offers the device authorization grant (`monctl login --sso` prefers it). */
  async supportsDeviceGrant(): Promise<boolean> {
    return Boolean((await this.configuration()).serverMetadata().device_authorization_endpoint);
  }

  async #discover(): Promise<client.Configuration> {
    const { issuer, clientId, clientSecret } = this.settings;
    const auth = clientSecret ? client.ClientSecretPost(clientSecret) : client.None();
    // ID tokens' signatures are verified against the provider's JWKS too: openid-client skips it
    // for the token endpoint's answers by default (TLS vouches for the issuer), which would take an
    // ID token signed by any key.
    const config = await client.discovery(new URL(issuer), clientId, undefined, auth, {
      timeout: TIMEOUT_SECONDS,
      execute: [client.enableNonRepudiationChecks, ...(insecureAllowed(issuer) ? [client.allowInsecureRequests] : [])],
    });
    config.timeout = TIMEOUT_SECONDS;
    this.#log.info({ issuer }, 'OpenID provider discovered');
    return config;
  }

  #unavailable(why: string): HttpError {
    return new HttpError(503, 'sso-unavailable', `the OpenID provider ${this.settings.issuer} cannot be reached: ${why}`, {
      headers: { 'Retry-After': String(RETRY_AFTER_MS / 1000) },
    });
  }
}

declare module '../../context.ts' {
  interface DaemonContext {
    /** The OpenID provider of single sign-on (`--oidc-issuer`); absent when none is set. */
    oidc?: OidcIssuer;
  }
}
