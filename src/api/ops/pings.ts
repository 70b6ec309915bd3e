import { Type } from '@sinclair/typebox';
import { defineOperation } from '../operation.ts';
import { Id } from '../schemas/common.ts';
import { MAX_PING_BODY_BYTES } from '../schemas/push.ts';

/** Push checks' pings beyond their history entries (docs/API.md#push-checks). The ping URLs themselves are raw routes. */
export const pingOperations = {
  getPingBody: defineOperation({
    id: 'getPingBody',
    method: 'GET',
    path: '/admin/api/resources/{id}/history/{historyId}/body',
    tag: 'Resources',
    access: 'admin',
    summary: "A ping's whole kept body, as text/plain",
    description: `The body a push check's ping sent, up to the ${MAX_PING_BODY_BYTES} bytes kept (\`bodyTruncated\` on the entry says whether it was cut), as \`text/plain; charset=utf-8\`. 404 when the entry is not this resource's or has no body.`,
    params: Type.Object({ id: Id, historyId: Id }),
    text: true,
    errors: [404],
  }),
} as const;
