import { Type } from '@sinclair/typebox';
import { Id, StringEnum } from './common.ts';
import { Name } from './monitoring.ts';

/**
 * `POST /admin/api/resources/batch` and the paged resource lists (docs/API.md#batches). A batch
 * is an ordered list of creates, updates and deletes applied in one transaction, all or nothing.
 */

/** Items per batch: past it the answer is 413. */
export const MAX_BATCH_ITEMS = 10_000;

/**
 * Bytes a batch body may have: 10,000 items averaging 840 bytes. A rich HTTP create (three
 * groups, three headers, three conditions, two dependencies and two locations) is 634 bytes as
 * JSON, what `apply` sends for a plain one about 200 (docs/DECISIONS.md#bulk-resources).
 */
export const MAX_BATCH_BYTES = 8 * 1024 * 1024;

export const BATCH_OPS = ['create', 'update', 'delete'] as const;
export type BatchOp = (typeof BATCH_OPS)[number];

/**
 * The body's shape for the OpenAPI document. Items are checked one by one by the handler (each
 * as the single call would check it), so that every refused item is named with its index.
 */
export const BatchItem = Type.Object(
  {
    op: StringEnum(BATCH_OPS),
    resource: Type.Optional(Type.Object({}, { description: 'create: the body of `POST /api/resources`' })),
    id: Type.Optional(Id),
    name: Type.Optional(Name),
    patch: Type.Optional(Type.Object({}, { description: 'update: the body of `PATCH /api/resources/{id}`' })),
  },
  {
    title: 'BatchItem',
    description:
      '`{op: "create", resource}`, `{op: "update", id | name, patch}` or `{op: "delete", id | name}`: an update or delete names its resource by `id` or by `name`, not both.',
  },
);

export const BatchBody = Type.Object(
  { items: Type.Array(Type.Unknown(), { description: `${MAX_BATCH_ITEMS} at most (413 past it); each a BatchItem` }) },
  { additionalProperties: false, title: 'BatchBody' },
);

export const BatchResultItem = Type.Object(
  {
    op: StringEnum(BATCH_OPS),
    id: Id,
    name: Type.String(),
    changed: Type.Boolean({ description: 'false for an update that changed nothing; true otherwise' }),
  },
  { title: 'BatchResultItem' },
);

export const BatchResult = Type.Object(
  { items: Type.Array(BatchResultItem, { description: 'what was done, one per item, in the order given' }) },
  { title: 'BatchResult' },
);

/** `?limit=&after=` of the resource lists: keyset pages by id. Without `limit` the whole list. */
export const ResourceListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'items per page (1 to 10,000); absent: all' })),
  after: Type.Optional(Type.Integer({ minimum: 0, maximum: 9007199254740991, description: 'the last id of the previous page' })),
});
