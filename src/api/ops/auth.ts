import { Type } from '@sinclair/typebox';
import { defineOperation } from '../operation.ts';
import { Deleted, IdParams } from '../schemas/common.ts';
import { ApiKey, ApiKeyCreate, ApiKeyCreated, Me, User, UserCreate, UserUpdate } from '../schemas/auth.ts';

const users = 'Users';
const keys = 'API keys';

export const authOperations = {
  me: defineOperation({
    id: 'me',
    method: 'GET',
    path: '/api/me',
    tag: 'Session',
    access: 'authenticated',
    summary: 'Who the caller is: user, role and credential kind',
    response: Me,
  }),
  listUsers: defineOperation({
    id: 'listUsers',
    method: 'GET',
    path: '/admin/api/users',
    tag: users,
    access: 'admin',
    summary: 'List users',
    response: Type.Array(User),
  }),
  createUser: defineOperation({
    id: 'createUser',
    method: 'POST',
    path: '/admin/api/users',
    tag: users,
    access: 'admin',
    summary: 'Create a user',
    body: UserCreate,
    response: User,
    errors: [409],
  }),
  updateUser: defineOperation({
    id: 'updateUser',
    method: 'PUT',
    path: '/admin/api/users/{id}',
    tag: users,
    access: 'admin',
    summary: "Change a user's password or role",
    description: 'Demoting the last ADMIN is refused with 409.',
    params: IdParams,
    body: UserUpdate,
    response: User,
    errors: [404, 409],
  }),
  deleteUser: defineOperation({
    id: 'deleteUser',
    method: 'DELETE',
    path: '/admin/api/users/{id}',
    tag: users,
    access: 'admin',
    summary: 'Delete a user',
    description:
      "Ends the user's sessions and revokes the API keys they created. Deleting the last ADMIN, or the user who owns " +
      "the key in the daemon's `<data-dir>/admin-api-key`, is refused with 409.",
    params: IdParams,
    response: Deleted,
    errors: [404, 409],
  }),
  listApiKeys: defineOperation({
    id: 'listApiKeys',
    method: 'GET',
    path: '/admin/api/api-keys',
    tag: keys,
    access: 'admin',
    summary: 'List API keys',
    response: Type.Array(ApiKey),
  }),
  createApiKey: defineOperation({
    id: 'createApiKey',
    method: 'POST',
    path: '/admin/api/api-keys',
    tag: keys,
    access: 'admin',
    summary: 'Generate an API key',
    description: 'The `token` is shown in this response only.',
    body: ApiKeyCreate,
    response: ApiKeyCreated,
    errors: [409],
  }),
  revokeApiKey: defineOperation({
    id: 'revokeApiKey',
    method: 'DELETE',
    path: '/admin/api/api-keys/{id}',
    tag: keys,
    access: 'admin',
    summary: 'Revoke an API key',
    description:
      "Takes effect on the next request. The key in the daemon's `<data-dir>/admin-api-key` is refused with 409 " +
      '(replace it with `monctl daemon reset-admin`, or delete the file first).',
    params: IdParams,
    response: Deleted,
    errors: [404, 409],
  }),
} as const;
