import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../daemon/docs/openapi.ts';

/**
 * The check types in the OpenAPI document (docs/API.md#check-types): each type's option object in
 * create, PATCH (nullable) and the admin reads, every option field described, the target format of
 * each type, and every errorCode with its meaning. Read from the document the daemon serves
 * (buildOpenApi is what /v3/api-docs sends; test/foundation/openapi.test.ts validates it whole).
 */
type Schema = { $ref?: string; properties?: Record<string, Schema>; anyOf?: Schema[]; description?: string; enum?: string[] };
const doc = buildOpenApi() as { paths: Record<string, Record<string, any>>; components?: { schemas?: Record<string, Schema> } };

/** Follows a `$ref` inside the document. */
function resolve(s: Schema): Schema {
  if (!s.$ref) return s;
  let node: any = doc;
  for (const part of s.$ref.slice(2).split('/')) node = node[part];
  return resolve(node);
}
const bodyOf = (path: string, method: string): Schema => resolve(doc.paths[path][method].requestBody.content['application/json'].schema);
const okOf = (path: string, method: string): Schema => resolve(doc.paths[path][method].responses['200'].content['application/json'].schema);
/** A property's schema (an empty one when absent: the assertion on it then fails). */
const prop = (s: Schema, name: string): Schema => s.properties?.[name] ?? {};
/** The object schema of a field that may be `X | null`. */
const objectOf = (s: Schema): Schema => resolve(s.anyOf ? (s.anyOf.map(resolve).find((x) => x.properties) ?? s) : s);

const OPTIONS: Record<string, string[]> = {
  dns: ['recordType', 'resolver', 'transport'],
  ping: ['count', 'intervalMs', 'family'],
  tls: ['starttls', 'sni', 'minVersion'],
  udp: ['send', 'sendEncoding'],
  tcp: ['send', 'sendEncoding', 'expect', 'expectKind'],
  grpc: ['service', 'tls'],
  websocket: ['headers', 'send'],
};

describe('the check types in the OpenAPI document', () => {
  it('create, PATCH and the admin view have each type’s option object, every field described', () => {
    const create = bodyOf('/api/resources', 'post');
    const patch = bodyOf('/api/resources/{id}', 'patch');
    const view = okOf('/admin/api/resources/{id}', 'get');
    for (const [field, keys] of Object.entries(OPTIONS)) {
      for (const [where, schema] of [
        ['create', create],
        ['patch', patch],
        ['view', view],
      ] as const) {
        const options = objectOf(prop(schema, field));
        expect(Object.keys(options.properties ?? {}), `${where} ${field}`).toEqual(keys);
      }
      const given = objectOf(prop(create, field));
      for (const key of keys) {
        const fieldSchema = prop(given, key);
        const described = fieldSchema.description ?? (field === 'udp' || field === 'tcp' || field === 'websocket' ? 'payload' : undefined);
        expect(described, `${field}.${key}`).toBeTruthy();
      }
      // PATCH takes null for the object: back to the defaults.
      expect(
        prop(patch, field).anyOf?.some((s) => (s as { type?: string }).type === 'null'),
        field,
      ).toBe(true);
    }
  });

  it('resourceType lists every type, and target says the format of each', () => {
    const create = bodyOf('/api/resources', 'post');
    const types = resolve(prop(create, 'resourceType')).enum ?? [];
    expect(types).toEqual(
      expect.arrayContaining(['HTTP', 'TCP', 'DOCKER', 'PUSH', 'DNS', 'PING', 'TLS', 'UDP', 'GRPC', 'WEBSOCKET', 'SSH']),
    );
    const target = prop(create, 'target').description ?? '';
    for (const type of ['HTTP', 'DNS', 'PING', 'TLS', 'UDP', 'GRPC', 'WEBSOCKET', 'SSH', 'DOCKER', 'PUSH']) expect(target).toContain(type);
    expect(prop(bodyOf('/api/resources/{id}', 'patch'), 'target').description).toContain('WEBSOCKET: a ws:// or wss:// URL');
  });

  it('errorCode and latestErrorCode name every code of the check types with its meaning', () => {
    const history = JSON.stringify(doc.paths['/api/resources/{id}/history'].get.responses['200']);
    const detail = JSON.stringify(okOf('/admin/api/resources/{id}', 'get'));
    for (const code of [
      'DNS_ERROR',
      'PING_FAILED',
      'TLS_ERROR',
      'NO_RESPONSE',
      'EXPECT_FAILED',
      'GRPC_ERROR',
      'WEBSOCKET_ERROR',
      'SSH_ERROR',
    ]) {
      expect(JSON.stringify(doc), code).toMatch(new RegExp(`${code} \\(`));
      expect(detail + history, code).toContain(code);
    }
  });
});
