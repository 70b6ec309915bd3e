import type { Static } from '@sinclair/typebox';
import type { ApiKey, LoginMethod, Role, User } from '../../src/api/schemas/auth.ts';
import { formatDateTime, formatNullable } from '../../src/time.ts';
import type { ApiKeyRow, UserRow } from '../store/schema.ts';

export function toUser(row: UserRow): Static<typeof User> {
  return {
    id: row.id,
    username: row.username,
    role: row.role as Role,
    twoFactor: row.totp_enabled_at !== null,
    sso: row.sso_subject !== null,
    lastLoginMethod: (row.last_login_method as LoginMethod | null) ?? null,
    createdAt: formatDateTime(row.created_at),
    updatedAt: formatDateTime(row.updated_at),
  };
}

export function toApiKey(row: ApiKeyRow): Static<typeof ApiKey> {
  return {
    id: row.id,
    name: row.name,
    role: row.role as Role,
    createdBy: row.created_by,
    createdAt: formatDateTime(row.created_at),
    expiresAt: formatNullable(row.expires_at),
    lastUsedAt: formatNullable(row.last_used_at),
    routeIds: row.route_ids ? (JSON.parse(row.route_ids) as number[]) : [],
  };
}
