import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { HTTP_METHODS } from '../../probes/types.ts';
import { StringEnum } from './common.ts';

/**
 * The request and expected answer of a check beyond the seed's GET and 2xx
 * (docs/API.md#resource-fields): optional resource fields, all absent on a seed resource. The
 * HTTP-only ones on a TCP or DOCKER resource are a 400 naming the field. Secret values
 * (`secretHeaders`, the basic password, the bearer token, the client certificate and key) are
 * write-only and sealed at rest; reads say which are set (`secrets`), never their values.
 */
export { HTTP_METHODS };
export const MAX_HEADERS = 32;
export const MAX_REQUEST_BODY_BYTES = 64 * 1024;
export const MAX_REDIRECT_HOPS = 10;

const HeaderValue = Type.String({ maxLength: 8192, pattern: '^[^\\r\\n\\u0000]*$', description: 'no CR, LF or NUL' });
const HeaderMap = (nullable: boolean, description: string) =>
  Type.Record(Type.String(), nullable ? Type.Union([HeaderValue, Type.Null()]) : HeaderValue, {
    maxProperties: MAX_HEADERS,
    description: `${description}; names are HTTP tokens, at most ${MAX_HEADERS}${nullable ? '. In PATCH, null removes one header' : ''}`,
  });
const StatusRange = Type.Union([
  Type.Integer({ minimum: 100, maximum: 599 }),
  Type.String({ pattern: '^[1-5][0-9]{2}(-[1-5][0-9]{2})?$', description: '`301`, or a range `200-299`' }),
]);
const Pem = (what: string) => Type.String({ minLength: 1, maxLength: 65536, description: `${what}, PEM` });

export const BasicAuth = Type.Object(
  {
    type: Type.Literal('basic'),
    username: Type.String({ maxLength: 256, pattern: '^[^:\\r\\n\\u0000]*$' }),
    password: Type.String({ maxLength: 1024 }),
  },
  { additionalProperties: false },
);
export const BearerAuth = Type.Object(
  { type: Type.Literal('bearer'), token: Type.String({ minLength: 1, maxLength: 8192, pattern: '^[^\\r\\n\\u0000]*$' }) },
  { additionalProperties: false },
);

/** The fields as create takes them; PATCH takes the same with null to remove an optional one (and a header). */
export function httpCheckFields(nullable: boolean) {
  const opt = <T extends TSchema>(schema: T) => Type.Optional(nullable ? Type.Union([schema, Type.Null()]) : schema);
  return {
    method: Type.Optional(StringEnum(HTTP_METHODS, { description: 'HTTP: the request method (default GET)' })),
    headers: opt(HeaderMap(nullable, 'HTTP: request headers, shown in reads')),
    secretHeaders: opt(HeaderMap(nullable, 'HTTP: request headers whose values are secrets (sealed, never returned)')),
    body: opt(Type.String({ maxLength: MAX_REQUEST_BODY_BYTES, description: 'HTTP: the request body, text, at most 64 KiB' })),
    contentType: opt(Type.String({ minLength: 1, maxLength: 256, description: "HTTP: the body's content type (default text/plain)" })),
    auth: opt(Type.Union([BasicAuth, BearerAuth], { description: 'HTTP: basic (the password a secret) or bearer (the token a secret)' })),
    clientCert: opt(Pem('HTTP: the client certificate (chain) for mTLS, a secret; needs clientKey')),
    clientKey: opt(Pem('HTTP: the client private key for mTLS, a secret; needs clientCert')),
    followRedirects: Type.Optional(
      Type.Boolean({ description: `HTTP: follow redirects, at most ${MAX_REDIRECT_HOPS} hops (default true)` }),
    ),
    expectStatus: opt(
      Type.Array(StatusRange, {
        minItems: 1,
        maxItems: 32,
        description: 'HTTP: the statuses that are up, codes and ranges (default 200-299)',
      }),
    ),
    timeoutSeconds: opt(
      Type.Integer({ minimum: 1, maximum: 120, description: "the check's timeout (default the daemon's --http-timeout, 15 s)" }),
    ),
    upsideDown: Type.Optional(Type.Boolean({ description: 'AVAILABLE exactly when the check would otherwise fail' })),
  };
}

/** What reads show (admin views): the plain fields as stored, and which secrets are set. */
export const HttpCheckView = {
  method: StringEnum(HTTP_METHODS),
  headers: Type.Record(Type.String(), Type.String()),
  body: Type.Union([Type.String(), Type.Null()]),
  contentType: Type.Union([Type.String(), Type.Null()]),
  auth: Type.Union(
    [Type.Object({ type: Type.Literal('basic'), username: Type.String() }), Type.Object({ type: Type.Literal('bearer') }), Type.Null()],
    { description: 'the kind of auth and the basic username; the password or token is never returned' },
  ),
  followRedirects: Type.Boolean(),
  expectStatus: Type.Array(Type.String(), { description: 'codes and ranges as strings (`200-299`, `301`)' }),
  timeoutSeconds: Type.Union([Type.Integer(), Type.Null()], { description: "null: the daemon's --http-timeout" }),
  upsideDown: Type.Boolean(),
  secrets: Type.Object(
    {
      headers: Type.Array(Type.String(), { description: 'names of the secret headers' }),
      clientCert: Type.Boolean({ description: 'a client certificate and key are set' }),
    },
    { description: 'which secrets are set, never their values' },
  ),
};
export type HttpCheckView = { [K in keyof typeof HttpCheckView]: Static<(typeof HttpCheckView)[K]> };
