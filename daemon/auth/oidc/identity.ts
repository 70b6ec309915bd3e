import type { Role } from '../../../src/api/schemas/auth.ts';
import type { OidcConfig } from '../../config.ts';

/** Who the provider says signed in: the ID token's claims merged with the UserInfo ones. */
export interface Identity {
  issuer: string;
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
  name: string | undefined;
  /** The value of `--oidc-username-claim` (email only when verified); undefined when absent. */
  username: string | undefined;
  /** The `--oidc-groups-claim` values: a list, or one string. */
  groups: string[];
}

const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** An Identity from the verified claims (ID token first; UserInfo fills what it left out). */
export function identityOf(settings: OidcConfig, claims: Record<string, unknown>): Identity {
  const email = text(claims.email)?.toLowerCase();
  // Some providers send "true" as a string.
  const emailVerified = claims.email_verified === true || claims.email_verified === 'true';
  const rawGroups = claims[settings.groupsClaim];
  const groups = (Array.isArray(rawGroups) ? rawGroups : rawGroups === undefined ? [] : [rawGroups])
    .filter((g): g is string => typeof g === 'string')
    .slice(0, 1000);
  const claimed = settings.usernameClaim === 'email' ? (emailVerified ? email : undefined) : text(claims[settings.usernameClaim]);
  return {
    issuer: String(claims.iss ?? settings.issuer),
    subject: String(claims.sub),
    email,
    emailVerified,
    name: text(claims.name),
    username: claimed,
    groups,
  };
}

/** The role the groups map to (first rule that matches), the default role, or undefined for `none`. */
export function roleOf(settings: OidcConfig, identity: Identity): Role | undefined {
  for (const rule of settings.roles) if (identity.groups.includes(rule.group)) return rule.role;
  return settings.defaultRole === 'none' ? undefined : settings.defaultRole;
}
