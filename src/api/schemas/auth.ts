import { Type } from '@sinclair/typebox';
import { Body, DateTime, DateTimeInput, Id, NullableDateTime, StringEnum } from './common.ts';

export const ROLES = ['ADMIN', 'USER'] as const;
export const Role = StringEnum(ROLES);
export type Role = (typeof ROLES)[number];

export const Username = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9._@-]+$',
  description: 'letters, digits and . _ @ - only',
});
export const Password = Type.String({ minLength: 12, maxLength: 1024 });

/** How a session logged in (docs/API.md#single-sign-on, #two-factor-login). */
export const LOGIN_METHODS = ['password', 'password+totp', 'sso'] as const;
export type LoginMethod = (typeof LOGIN_METHODS)[number];

export const User = Type.Object(
  {
    id: Id,
    username: Type.String(),
    role: Role,
    twoFactor: Type.Boolean({ description: 'a TOTP second factor is enrolled (docs/API.md#two-factor-login)' }),
    sso: Type.Boolean({ description: 'linked to an account of the OpenID provider (docs/API.md#single-sign-on)' }),
    lastLoginMethod: Type.Union([StringEnum(LOGIN_METHODS), Type.Null()], { description: 'how the user last logged in; null: never' }),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'User' },
);
export const UserCreate = Body({ username: Username, password: Password, role: Role }, 'UserCreate');
export const UserUpdate = Body({ password: Type.Optional(Password), role: Type.Optional(Role) }, 'UserUpdate');

export const KeyName = Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f]+$' });
export const ApiKey = Type.Object(
  {
    id: Id,
    name: Type.String(),
    role: Role,
    createdBy: Type.String(),
    createdAt: DateTime,
    expiresAt: NullableDateTime,
    lastUsedAt: NullableDateTime,
    routeIds: Type.Array(Id, {
      description: 'a route key: it opens these routes (auth apiKey) at the edge and nothing on the API; empty for API keys',
    }),
  },
  { title: 'ApiKey' },
);
export const ApiKeyCreate = Body(
  {
    name: KeyName,
    role: Type.Optional(Role),
    expiresAt: Type.Optional(Type.Union([DateTimeInput, Type.Null()])),
    routeIds: Type.Optional(
      Type.Array(Id, {
        // No uniqueItems (see alert-rules.ts): duplicates are dropped by the handler.
        minItems: 1,
        maxItems: 1000,
        description:
          'make a route key: it opens these HTTP routes at the edge (in X-API-KEY or ?token=) and is refused by the API (duplicates are ignored)',
      }),
    ),
  },
  'ApiKeyCreate',
);
export const ApiKeyCreated = Type.Composite([ApiKey, Type.Object({ token: Type.String({ description: 'shown once' }) })], {
  title: 'ApiKeyCreated',
});

export const Me = Type.Object(
  {
    username: Type.String(),
    role: Role,
    via: StringEnum(['session', 'api-key'] as const),
    keyId: Type.Union([Id, Type.Null()]),
    login: Type.Union([StringEnum(LOGIN_METHODS), Type.Null()], {
      description: 'a session: how it logged in (password, password+totp, sso); null for an API key',
    }),
    twoFactor: Type.Boolean({ description: 'the user has a TOTP second factor' }),
    sso: Type.Boolean({ description: 'the user is linked to an account of the OpenID provider' }),
  },
  { title: 'Me' },
);
