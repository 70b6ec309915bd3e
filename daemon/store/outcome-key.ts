import { createHash } from 'node:crypto';

/**
 * The unique key of a check outcome (status, error code, message): a hash, so that a message of
 * any length fits a unique index on both dialects (PostgreSQL's btree entries stop near 2.7 KB).
 */
export function outcomeKey(status: string, errorCode: string | null, message: string | null): string {
  return createHash('sha1')
    .update(JSON.stringify([status, errorCode, message]))
    .digest('base64url');
}
