import { Type } from '@sinclair/typebox';
import { Body, DateTime, Id } from './common.ts';

/** Administrative settings of monitoring: the CORS allow-list and registry credentials. */
export const CorsOrigins = Type.Object({ origins: Type.Array(Type.String()) }, { title: 'CorsOrigins' });
/** What adding one returns: the origin as stored (canonical) and the whole list. */
export const CorsOriginAdded = Type.Object(
  {
    origin: Type.String({ description: 'the origin as stored: lower case, default port dropped' }),
    origins: Type.Array(Type.String()),
  },
  { title: 'CorsOriginAdded' },
);
export const CorsOriginBody = Body(
  { origin: Type.String({ minLength: 1, maxLength: 255, description: 'scheme://host[:port]' }) },
  'CorsOriginBody',
);
export const CorsOriginQuery = Type.Object({ origin: Type.String({ minLength: 1, maxLength: 255 }) });

export const RegistryCredential = Type.Object(
  { id: Id, registry: Type.String(), username: Type.String(), createdAt: DateTime },
  { title: 'RegistryCredential', description: 'the password is never returned' },
);
export const RegistryCredentialCreate = Body(
  {
    registry: Type.String({ minLength: 1, maxLength: 255, description: 'host[:port] of the registry' }),
    username: Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\u0000-\\u001f]+$', description: 'no control characters' }),
    password: Type.String({ minLength: 1, maxLength: 4096 }),
  },
  'RegistryCredentialCreate',
);
