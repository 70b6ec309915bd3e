import { Type } from '@sinclair/typebox';
import { defineOperation } from '../operation.ts';
import { Deleted, IdParams } from '../schemas/common.ts';
import { PingKey, PingKeyCreate } from '../schemas/push.ts';

const tag = 'Push checks';

/** `/admin/api/ping-keys`: the keys of `/ping/{key}/{slug}` (docs/API.md#push-checks). */
export const pingKeyOperations = {
  listPingKeys: defineOperation({
    id: 'listPingKeys',
    method: 'GET',
    path: '/admin/api/ping-keys',
    tag,
    access: 'admin',
    summary: "Ping keys: the daemon's and the groups'",
    response: Type.Array(PingKey),
  }),
  createPingKey: defineOperation({
    id: 'createPingKey',
    method: 'POST',
    path: '/admin/api/ping-keys',
    tag,
    access: 'admin',
    summary: "Create the daemon's or a group's ping key, or replace it",
    description:
      "Without groupId (or null), the daemon's key, which pings every push check by slug; with one, that group's, which pings " +
      "the group's push checks only. A scope has one key: creating one replaces the old key, which stops working at once. " +
      'With allowCreate, `?create=1` on a ping creates a PUSH resource for an unknown slug (in the group). 400 naming groupId for an unknown group.',
    body: PingKeyCreate,
    response: PingKey,
    status: 201,
  }),
  deletePingKey: defineOperation({
    id: 'deletePingKey',
    method: 'DELETE',
    path: '/admin/api/ping-keys/{id}',
    tag,
    access: 'admin',
    summary: 'Delete a ping key',
    description: 'Its `/ping/{key}/{slug}` URLs stop working at once; the ping URLs by uuid are untouched.',
    params: IdParams,
    response: Deleted,
    errors: [404],
  }),
} as const;
