import type { TSchema } from '@sinclair/typebox';
import type { OperationDef } from '../../src/api/operation.ts';
import { operationList } from '../../src/api/operations.ts';
import { ProblemSchema } from '../../src/api/schemas/common.ts';
import { VERSION } from '../../src/version.ts';

/** TypeBox schemas are JSON Schema plus symbol keys; JSON drops the symbols. */
const plain = (schema: TSchema): Record<string, unknown> => JSON.parse(JSON.stringify(schema));

/** The session cookie's scheme: documented, but left out of the explorer's Authorize dialog (explorer.ts). */
export const SESSION_SCHEME = 'session';

const CREDENTIALS = [{ apiKeyBearer: [] }, { apiKeyHeader: [] }, { [SESSION_SCHEME]: [] }];

function security(op: OperationDef) {
  // `{}` first: the operation answers anonymous callers too (with what they may see).
  return op.access === 'public' ? [{}, ...CREDENTIALS] : CREDENTIALS;
}

function parameters(op: OperationDef) {
  const list: unknown[] = [];
  for (const [where, schema] of [
    ['path', op.params],
    ['query', op.query],
  ] as const) {
    if (!schema) continue;
    const required = new Set(schema.required ?? []);
    for (const [name, prop] of Object.entries(schema.properties)) {
      const s = plain(prop as TSchema);
      list.push({ name, in: where, required: where === 'path' || (required.has(name) && s.default === undefined), schema: s });
    }
  }
  return list;
}

function errorStatuses(op: OperationDef): number[] {
  const statuses = new Set<number>(op.errors ?? []);
  if (op.params || op.query || op.body) statuses.add(400);
  // A public operation answers anonymous callers, but a credential that is sent is checked: a bad one is 401.
  statuses.add(401);
  if (op.access === 'admin') statuses.add(403);
  if (op.access !== 'public' && op.method !== 'GET') statuses.add(403); // CSRF for sessions
  if (op.params && 'id' in op.params.properties) statuses.add(404);
  if (op.body) {
    statuses.add(413);
    statuses.add(415);
  }
  return [...statuses].sort();
}

function responses(op: OperationDef) {
  const out: Record<string, unknown> = {};
  if (op.stream) {
    out['200'] = { description: 'Server-Sent Events stream', content: { 'text/event-stream': { schema: { type: 'string' } } } };
  } else if (op.text) {
    out['200'] = { description: 'OK', content: { 'text/plain': { schema: { type: 'string' } } } };
  } else {
    out[String(op.status ?? 200)] = {
      description: 'OK',
      content: { 'application/json': { schema: op.response ? plain(op.response) : {} } },
    };
  }
  for (const status of errorStatuses(op)) {
    out[String(status)] = {
      description:
        status === 401
          ? op.access === 'public'
            ? 'A credential was sent and is invalid, expired or revoked'
            : 'Not authenticated'
          : status === 403
            ? 'Not allowed (role or CSRF)'
            : 'Problem',
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    };
  }
  return out;
}

/** The OpenAPI 3.1 document, generated from the operation table: nothing here is written by hand. */
export function buildOpenApi(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operationList) {
    const item: Record<string, unknown> = {
      operationId: op.id,
      summary: op.summary,
      tags: [op.tag],
      security: security(op),
      'x-monctl-access': op.access,
      responses: responses(op),
    };
    if (op.description) item.description = op.description;
    const params = parameters(op);
    if (params.length) item.parameters = params;
    if (op.body) item.requestBody = { required: !op.bodyOptional, content: { 'application/json': { schema: plain(op.body) } } };
    (paths[op.path] ??= {})[op.method.toLowerCase()] = item;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'monctl API',
      version: VERSION,
      description:
        'Availability monitoring (`/api/**`) and tunnel administration (`/admin/**`). ' +
        'Authenticate with an API key (`Authorization: Bearer <key>`, `ApiKey <key>` or `X-API-KEY`) or a session from `/login` ' +
        '(the `JSESSIONID` cookie; this explorer uses it once you are logged in); session calls that change state send `X-CSRF-TOKEN`. ' +
        '`GET /api/me` tells who the caller is.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    // Relative: the API is at the root of whichever address the document was fetched from (--listen, a proxy, --public-url).
    servers: [{ url: '/', description: 'this daemon' }],
    paths,
    components: {
      schemas: { Problem: plain(ProblemSchema) },
      securitySchemes: {
        apiKeyBearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'API key as `Authorization: Bearer <key>` (or `ApiKey <key>`)',
        },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-KEY' },
        [SESSION_SCHEME]: {
          type: 'apiKey',
          in: 'cookie',
          name: 'JSESSIONID',
          description:
            'the session of a browser login at /login (HttpOnly: the explorer uses it by itself after logging in, so its Authorize dialog does not ask for it); unsafe methods also send X-CSRF-TOKEN',
        },
      },
    },
  };
}
