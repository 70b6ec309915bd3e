import { ROLES, type Role } from '../../src/api/schemas/auth.ts';
import type { IdentityConfig } from '../config.ts';
import type { Setting } from './setting.ts';
import * as t from './types.ts';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|\[::1\]|localhost)$/;

/** Plain http is for a provider on this machine only (development, tests); anything else needs https. */
export function insecureAllowed(issuer: string): boolean {
  const url = new URL(issuer);
  return url.protocol === 'http:' && LOOPBACK.test(url.hostname);
}

const roleMap: t.ValueType<Array<{ group: string; role: Role }>> = {
  name: 'group=ROLE pairs, comma-separated',
  parse(raw) {
    const items = Array.isArray(raw)
      ? raw
      : typeof raw === 'string'
        ? raw
            .split(',')
            .map((p) => p.trim())
            .filter(Boolean)
        : undefined;
    const pairs = items?.map((item) => {
      const m = typeof item === 'string' ? /^(.+)=(ADMIN|USER)$/.exec(item.trim()) : null;
      return m ? { group: m[1]!.trim(), role: m[2] as Role } : undefined;
    });
    if (!pairs || pairs.length === 0 || pairs.some((p) => !p?.group))
      throw new Error(
        `must be group=ROLE pairs (ROLE one of ${ROLES.join(', ')}), such as monctl-admins=ADMIN,ops=USER; got ${t.describe(raw)}`,
      );
    return pairs as Array<{ group: string; role: Role }>;
  },
  format: (v) => v.map((p) => `${p.group}=${p.role}`).join(','),
};

const words: t.ValueType<string[]> = {
  name: 'words, comma-separated',
  parse(raw) {
    const items = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(/[\s,]+/).filter(Boolean) : undefined;
    if (!items || items.length === 0 || !items.every((v) => typeof v === 'string' && /^[\x21-\x7e]+$/.test(v)))
      throw new Error(`must be a comma-separated list of words, such as openid,email,profile; got ${t.describe(raw)}`);
    return items as string[];
  },
  format: (v) => v.join(','),
};

const row = <T>(s: Setting<T>): Setting => s as Setting;

/** The settings rows of sign-in: single sign-on, the password form, two-factor login, route sessions. */
export const IDENTITY_SETTINGS: readonly Setting[] = [
  row({
    key: 'oidcIssuer',
    flag: '--oidc-issuer <url>',
    env: 'MONCTL_OIDC_ISSUER',
    type: t.httpUrl,
    unsetMeans: 'no single sign-on',
    help: 'OpenID Connect issuer URL, found through its discovery document (https; http only on loopback)',
  }),
  row({
    key: 'oidcClientId',
    flag: '--oidc-client-id <id>',
    env: 'MONCTL_OIDC_CLIENT_ID',
    type: t.string,
    unsetMeans: 'needed with --oidc-issuer',
    help: 'client ID registered at the provider; its redirect URIs: <public URL>/login/sso/callback and https://<route host>/.monctl/sso/callback',
  }),
  row({
    key: 'oidcClientSecret',
    env: 'MONCTL_OIDC_CLIENT_SECRET',
    type: t.secret,
    secret: true,
    unsetMeans: 'a public client (PKCE only)',
    help: 'client secret registered at the provider',
  }),
  row({
    key: 'oidcName',
    flag: '--oidc-name <name>',
    env: 'MONCTL_OIDC_NAME',
    type: t.string,
    unsetMeans: "the issuer's host name",
    help: 'what the login page button says: "Sign in with <name>"',
  }),
  row({
    key: 'oidcScopes',
    flag: '--oidc-scopes <scopes>',
    env: 'MONCTL_OIDC_SCOPES',
    type: words,
    default: () => ['openid', 'email', 'profile'],
    help: 'scopes asked for (add the one of your groups claim, e.g. groups)',
  }),
  row({
    key: 'oidcUsers',
    flag: '--oidc-users <create|existing>',
    env: 'MONCTL_OIDC_USERS',
    type: t.oneOf(['create', 'existing'] as const),
    default: () => 'create',
    help: 'create: a user is created at the first SSO login; existing: only users that exist already may log in',
  }),
  row({
    key: 'oidcUsernameClaim',
    flag: '--oidc-username-claim <claim>',
    env: 'MONCTL_OIDC_USERNAME_CLAIM',
    type: t.string,
    default: () => 'email',
    help: 'the claim that names the user (email needs email_verified)',
  }),
  row({
    key: 'oidcGroupsClaim',
    flag: '--oidc-groups-claim <claim>',
    env: 'MONCTL_OIDC_GROUPS_CLAIM',
    type: t.string,
    default: () => 'groups',
    help: 'the claim holding the groups, for --oidc-roles and the groups rules of routes',
  }),
  row({
    key: 'oidcRoles',
    flag: '--oidc-roles <group=ROLE,...>',
    env: 'MONCTL_OIDC_ROLES',
    type: roleMap,
    unsetMeans: 'every SSO user gets --oidc-default-role',
    help: 'roles from groups, first match wins, re-evaluated at each login (e.g. monctl-admins=ADMIN)',
  }),
  row({
    key: 'oidcDefaultRole',
    flag: '--oidc-default-role <ADMIN|USER|none>',
    env: 'MONCTL_OIDC_DEFAULT_ROLE',
    type: t.oneOf(['ADMIN', 'USER', 'none'] as const),
    default: () => 'USER',
    help: 'the role of an SSO user no group maps; none refuses them',
  }),
  row({
    key: 'passwordLogin',
    flag: '--password-login <on|off>',
    env: 'MONCTL_PASSWORD_LOGIN',
    type: t.onOff,
    default: () => true,
    help: 'the username/password form; off leaves single sign-on and API keys',
  }),
  row({
    key: 'twoFactorRequired',
    flag: '--two-factor-required <off|admin|all>',
    env: 'MONCTL_TWO_FACTOR_REQUIRED',
    type: t.oneOf(['off', 'admin', 'all'] as const),
    default: () => 'off',
    help: 'who must enrol a TOTP second factor to log in with a password',
  }),
  row({
    key: 'routeSession',
    flag: '--route-session <duration>',
    env: 'MONCTL_ROUTE_SESSION',
    type: t.duration,
    default: () => 12 * 3_600_000,
    help: 'how long a sign-in in front of a route (auth oidc) lasts, unless the route sets sessionTtl',
  }),
];

/** The IdentityConfig of resolved settings; `get` reads one by key. */
export function identityConfigOf(get: <T>(key: string) => T): IdentityConfig {
  const issuer = get<string | undefined>('oidcIssuer');
  const clientId = get<string | undefined>('oidcClientId');
  const identity: IdentityConfig = {
    passwordLogin: get<boolean>('passwordLogin'),
    twoFactorRequired: get<'off' | 'admin' | 'all'>('twoFactorRequired'),
    routeSessionMs: get<number>('routeSession'),
  };
  if (issuer && clientId) {
    identity.oidc = {
      issuer,
      clientId,
      clientSecret: get<string | undefined>('oidcClientSecret'),
      name: get<string | undefined>('oidcName') ?? new URL(issuer).hostname,
      scopes: get<string[]>('oidcScopes'),
      users: get<'create' | 'existing'>('oidcUsers'),
      usernameClaim: get<string>('oidcUsernameClaim'),
      groupsClaim: get<string>('oidcGroupsClaim'),
      roles: get<Array<{ group: string; role: Role }> | undefined>('oidcRoles') ?? [],
      defaultRole: get<Role | 'none'>('oidcDefaultRole'),
    };
  }
  return identity;
}
