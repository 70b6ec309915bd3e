import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { type Caller, call, ok } from './helpers.ts';

// The protocol checks' options (docs/API.md#check-types) against a real daemon: what create
// stores (defaults filled in), what the admin reads show (the type's own object, every field,
// no other), PATCH's merge, null and type change, and the no-op PATCH. One daemon for the file.
let d: TestDaemon;
let admin: Caller;

beforeAll(async () => {
  d = await startDaemon();
  admin = { kind: 'key', token: d.adminKey };
});
afterAll(async () => {
  await d?.stop();
});

let named = 0;
// Inactive: nothing is checked, the file is about storage and reads.
const create = (fields: Record<string, unknown>) =>
  ok(call(d, admin, 'POST', '/api/resources', { name: `options-${++named}`, active: false, ...fields }));
const detail = (id: number) => ok(call(d, admin, 'GET', `/admin/api/resources/${id}`));
const patch = (id: number, body: Record<string, unknown>) => ok(call(d, admin, 'PATCH', `/api/resources/${id}`, body));
const OPTION_KEYS = ['dns', 'ping', 'tls', 'udp', 'tcp', 'grpc', 'websocket'];
const optionKeysOf = (view: Record<string, unknown>) => OPTION_KEYS.filter((k) => k in view);

const DEFAULTS = {
  dns: { recordType: 'A', resolver: null, transport: 'udp' },
  ping: { count: 3, intervalMs: 200, family: 'auto' },
  tls: { starttls: null, sni: null, minVersion: 'TLSv1.2' },
  udp: { send: '', sendEncoding: 'text' },
  tcp: { send: null, sendEncoding: 'text', expect: null, expectKind: 'text' },
  grpc: { service: '', tls: false },
  websocket: { headers: {}, send: null },
};

describe('create and reads', () => {
  it.each([
    ['DNS', 'example.com', 'dns'],
    ['PING', '127.0.0.1', 'ping'],
    ['TLS', '127.0.0.1:443', 'tls'],
    ['UDP', '127.0.0.1:53', 'udp'],
    ['TCP', '127.0.0.1:25', 'tcp'],
    ['GRPC', '127.0.0.1:50051', 'grpc'],
    ['WEBSOCKET', 'ws://127.0.0.1:8080/socket', 'websocket'],
  ] as const)('a %s resource without options reads its own object with every default, and no other', async (type, target, field) => {
    const r = await create({ resourceType: type, target });
    const view = await detail(r.id);
    expect(view[field]).toEqual(DEFAULTS[field]);
    expect(optionKeysOf(view)).toEqual([field]);
    const list = await ok(call(d, admin, 'GET', '/admin/api/resources'));
    const item = list.find((x: { id: number }) => x.id === r.id);
    expect(item[field]).toEqual(DEFAULTS[field]);
    expect(optionKeysOf(item)).toEqual([field]);
  });

  it('HTTP, DOCKER, SSH and PUSH show no option object', async () => {
    for (const [resourceType, target] of [
      ['HTTP', 'http://127.0.0.1:1/'],
      ['DOCKER', 'library/alpine'],
      ['SSH', '127.0.0.1'],
      ['PUSH', undefined],
    ]) {
      const r = await create({ resourceType, target });
      expect(optionKeysOf(await detail(r.id)), resourceType).toEqual([]);
    }
  });

  it('the fields given are kept and the rest are their defaults', async () => {
    const r = await create({
      resourceType: 'DNS',
      target: '_sip._tcp.example.com.',
      dns: { recordType: 'SRV', resolver: '127.0.0.1:5353' },
    });
    expect((await detail(r.id)).dns).toEqual({ recordType: 'SRV', resolver: '127.0.0.1:5353', transport: 'udp' });
    const w = await create({
      resourceType: 'WEBSOCKET',
      target: 'wss://127.0.0.1/x',
      websocket: { headers: { 'X-Token': 'a' }, send: 'hi' },
    });
    expect((await detail(w.id)).websocket).toEqual({ headers: { 'X-Token': 'a' }, send: 'hi' });
  });
});

describe('PATCH', () => {
  it('merges the given fields over the stored ones; a field set to null goes back to its default', async () => {
    const r = await create({ resourceType: 'TCP', target: '127.0.0.1:6379', tcp: { send: 'PING\\r\\n', expect: '+PONG' } });
    expect((await patch(r.id, { tcp: { expectKind: 'regex', expect: '^\\+PONG' } })).tcp).toEqual({
      send: 'PING\\r\\n',
      sendEncoding: 'text',
      expect: '^\\+PONG',
      expectKind: 'regex',
    });
    expect((await patch(r.id, { tcp: { send: null } })).tcp).toEqual({
      send: null,
      sendEncoding: 'text',
      expect: '^\\+PONG',
      expectKind: 'regex',
    });
  });

  it('null goes back to the defaults', async () => {
    const r = await create({ resourceType: 'PING', target: '::1', ping: { count: 5, family: 'ipv6' } });
    expect((await patch(r.id, { ping: null })).ping).toEqual(DEFAULTS.ping);
  });

  it('a PATCH equal to the stored options changes nothing (no new updatedAt-driven reschedule)', async () => {
    const r = await create({ resourceType: 'UDP', target: '127.0.0.1:7', udp: { send: '0a0b', sendEncoding: 'hex' } });
    const before = await detail(r.id);
    const after = await patch(r.id, { udp: { send: '0a0b', sendEncoding: 'hex' } });
    expect(after.udp).toEqual(before.udp);
    expect(after.currentStatus).toBe(before.currentStatus);
  });

  it("changing resourceType drops the old type's options and takes the new type's object", async () => {
    const r = await create({ resourceType: 'DNS', target: 'example.com', dns: { recordType: 'MX' } });
    const tls = await patch(r.id, { resourceType: 'TLS', target: 'example.com:465', tls: { sni: 'mail.example.com' } });
    expect(optionKeysOf(tls)).toEqual(['tls']);
    expect(tls.tls).toEqual({ starttls: null, sni: 'mail.example.com', minVersion: 'TLSv1.2' });
    const back = await patch(r.id, { resourceType: 'DNS', target: 'example.com' });
    expect(back.dns).toEqual(DEFAULTS.dns);
    const ssh = await patch(r.id, { resourceType: 'SSH', target: 'example.com' });
    expect(optionKeysOf(ssh)).toEqual([]);
  });
});

/** The fields a 400 names: the same from create and from `POST /admin/api/resources/test` (never a 5xx). */
async function refusedBoth(body: Record<string, unknown>): Promise<string[]> {
  const fields: string[][] = [];
  for (const path of ['/api/resources', '/admin/api/resources/test']) {
    const r = await call(d, admin, 'POST', path, { name: `bad-${++named}`, active: false, ...body });
    expect(r.status, `${path}: ${r.text}`).toBe(400);
    expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
    fields.push(r.json().errors.map((e: { field: string }) => e.field));
  }
  expect(fields[1]).toEqual(fields[0]);
  return fields[0];
}

describe('bad input: a 400 naming the field', () => {
  it.each([
    ['DNS', 'exa mple.com'],
    ['DNS', 'a..b'],
    ['DNS', 'http://example.com/'],
    ['DNS', 'example.com:53'],
    ['DNS', '192.0.2.1'], // an address only for PTR
    ['DNS', 'exam\u0000ple.com'],
    ['DNS', 'example.com\r\nX: y'],
    ['DNS', `${'a'.repeat(64)}.com`],
    ['PING', '127.0.0.1:80'],
    ['PING', '[::1]'],
    ['PING', 'host\u0007name'],
    ['PING', 'exa_mple.com'],
    ['TLS', 'example.com'],
    ['TLS', '::1:443'],
    ['TLS', 'example.com:0'],
    ['UDP', 'example.com:99999'],
    ['UDP', 'exa\tmple.com:53'],
    ['GRPC', 'grpc://example.com:50051'],
    ['WEBSOCKET', 'http://example.com/'],
    ['WEBSOCKET', 'ws://'],
    ['WEBSOCKET', 'ws://exa mple.com/'],
    ['WEBSOCKET', 'ws://example.com/\u0001'],
    ['WEBSOCKET', 'wss://user:secret@example.com/'],
    ['SSH', 'a b'],
    ['SSH', 'example.com:65536'],
    ['SSH', 'ssh://example.com'],
  ])('%s target %j', async (resourceType, target) => {
    expect(await refusedBoth({ resourceType, target })).toEqual(['target']);
  });

  it('takes the targets the types name: SRV labels, a trailing dot, PTR of an address, IPv6 without brackets, SSH without a port', async () => {
    for (const body of [
      { resourceType: 'DNS', target: '_sip._tcp.example.com.' },
      { resourceType: 'DNS', target: '192.0.2.1', dns: { recordType: 'PTR' } },
      { resourceType: 'DNS', target: '2001:db8::1', dns: { recordType: 'PTR' } },
      { resourceType: 'PING', target: '::1' },
      { resourceType: 'PING', target: 'localhost' },
      { resourceType: 'TLS', target: '[::1]:993' },
      { resourceType: 'SSH', target: 'example.com' },
      { resourceType: 'WEBSOCKET', target: 'wss://[::1]:8443/live?x=1' },
    ])
      await create(body);
  });

  it.each([
    ['options of another type', { resourceType: 'TLS', target: 'example.com:443', dns: { recordType: 'A' } }, 'dns'],
    ['options on a type without them', { resourceType: 'SSH', target: 'example.com', tcp: { send: 'x' } }, 'tcp'],
    ['options on HTTP', { resourceType: 'HTTP', target: 'http://example.com/', websocket: {} }, 'websocket'],
    ['an HTTP field on a new type', { resourceType: 'DNS', target: 'example.com', method: 'POST' }, 'method'],
    ['an HTTP header on a new type', { resourceType: 'WEBSOCKET', target: 'ws://example.com/', headers: { 'X-A': 'b' } }, 'headers'],
    ['skipTLS where no TLS is made', { resourceType: 'DNS', target: 'example.com', skipTLS: true }, 'skipTLS'],
    ['odd hex', { resourceType: 'UDP', target: '127.0.0.1:7', udp: { send: 'abc', sendEncoding: 'hex' } }, 'udp.send'],
    ['hex that is not hex', { resourceType: 'TCP', target: '127.0.0.1:7', tcp: { send: 'zz', sendEncoding: 'hex' } }, 'tcp.send'],
    ['hex with spaces', { resourceType: 'UDP', target: '127.0.0.1:7', udp: { send: '0a 0b', sendEncoding: 'hex' } }, 'udp.send'],
    [
      '4,098 bytes of text in 2,049 characters',
      { resourceType: 'UDP', target: '127.0.0.1:7', udp: { send: 'é'.repeat(2049) } },
      'udp.send',
    ],
    [
      '4,097 bytes of hex',
      { resourceType: 'TCP', target: '127.0.0.1:7', tcp: { send: 'ab'.repeat(4097), sendEncoding: 'hex' } },
      'tcp.send',
    ],
    [
      'a websocket message over 4 KiB',
      { resourceType: 'WEBSOCKET', target: 'ws://example.com/', websocket: { send: 'x'.repeat(4097) } },
      'websocket.send',
    ],
    [
      'a regex that does not compile',
      { resourceType: 'TCP', target: '127.0.0.1:7', tcp: { expect: '(+PONG', expectKind: 'regex' } },
      'tcp.expect',
    ],
    [
      'an expect over its cap',
      { resourceType: 'TCP', target: '127.0.0.1:7', tcp: { expect: 'a'.repeat(1025), expectKind: 'regex' } },
      'tcp.expect',
    ],
    ['expect hex that is not hex', { resourceType: 'TCP', target: '127.0.0.1:7', tcp: { expect: '0g', expectKind: 'hex' } }, 'tcp.expect'],
    ['a resolver that is not host:port', { resourceType: 'DNS', target: 'example.com', dns: { resolver: 'dns server' } }, 'dns.resolver'],
    [
      'a resolver with a control character',
      { resourceType: 'DNS', target: 'example.com', dns: { resolver: '127.0.0.1\u0000:53' } },
      'dns.resolver',
    ],
    ['a record type that does not exist', { resourceType: 'DNS', target: 'example.com', dns: { recordType: 'ANY' } }, 'dns.recordType'],
    ['an SNI that is an address', { resourceType: 'TLS', target: 'example.com:443', tls: { sni: '192.0.2.1' } }, 'tls.sni'],
    ['an SNI with junk', { resourceType: 'TLS', target: 'example.com:443', tls: { sni: 'mail example.com' } }, 'tls.sni'],
    ['a ping count of 11', { resourceType: 'PING', target: '::1', ping: { count: 11 } }, 'ping.count'],
    ['an unknown option field', { resourceType: 'GRPC', target: 'example.com:50051', grpc: { services: 'x' } }, 'grpc.services'],
    ['a service name with a slash', { resourceType: 'GRPC', target: 'example.com:50051', grpc: { service: 'a/b' } }, 'grpc.service'],
    [
      'a websocket Host header',
      { resourceType: 'WEBSOCKET', target: 'ws://example.com/', websocket: { headers: { Host: 'x' } } },
      'websocket.headers',
    ],
    [
      'a Sec-WebSocket-Key header',
      { resourceType: 'WEBSOCKET', target: 'ws://example.com/', websocket: { headers: { 'Sec-WebSocket-Key': 'x' } } },
      'websocket.headers',
    ],
    [
      'a header name with a space',
      { resourceType: 'WEBSOCKET', target: 'ws://example.com/', websocket: { headers: { 'X A': 'x' } } },
      'websocket.headers',
    ],
    [
      'a header value with CR LF',
      { resourceType: 'WEBSOCKET', target: 'ws://example.com/', websocket: { headers: { 'X-A': 'a\r\nB: c' } } },
      'websocket.headers.X-A',
    ],
    [
      'a header given twice',
      { resourceType: 'WEBSOCKET', target: 'ws://example.com/', websocket: { headers: { 'X-A': '1', 'x-a': '2' } } },
      'websocket.headers',
    ],
  ])('%s', async (_what, body, field) => {
    expect(await refusedBoth(body)).toEqual([field]);
  });

  it('options on PUSH (which the test endpoint refuses as a whole)', async () => {
    const r = await call(d, admin, 'POST', '/api/resources', { name: 'push-ping', resourceType: 'PUSH', ping: { count: 1 } });
    expect(r.status, r.text).toBe(400);
    expect(r.json().errors.map((e: { field: string }) => e.field)).toEqual(['ping']);
  });

  it('a body near the API body limit is a 400 naming the field; one over it a 413; never a 5xx', async () => {
    const near = { resourceType: 'UDP', target: '127.0.0.1:7', udp: { send: 'x'.repeat(1000 * 1000) } };
    expect(await refusedBoth(near)).toEqual(['udp.send']);
    const over = await call(d, admin, 'POST', '/api/resources', { ...near, name: 'too-big', udp: { send: 'x'.repeat(1100 * 1000) } });
    expect(over.status).toBe(413);
  });
});

describe('bad PATCH: the merged whole is checked, a 400 naming the field', () => {
  const bad = async (id: number, body: Record<string, unknown>) => {
    const r = await call(d, admin, 'PATCH', `/api/resources/${id}`, body);
    expect(r.status, r.text).toBe(400);
    return r.json().errors.map((e: { field: string }) => e.field);
  };

  it('a kind that makes the stored expect invalid, another type’s options, an address for a non-PTR question', async () => {
    const tcp = await create({ resourceType: 'TCP', target: '127.0.0.1:6379', tcp: { expect: '(+PONG' } });
    expect(await bad(tcp.id, { tcp: { expectKind: 'regex' } })).toEqual(['tcp.expect']);
    expect(await bad(tcp.id, { udp: { send: 'x' } })).toEqual(['udp']);
    expect(await bad(tcp.id, { resourceType: 'UDP', tcp: { send: 'x' } })).toEqual(['tcp']);
    const dns = await create({ resourceType: 'DNS', target: '192.0.2.1', dns: { recordType: 'PTR' } });
    expect(await bad(dns.id, { dns: { recordType: 'A' } })).toEqual(['target']);
    expect(await bad(dns.id, { dns: null })).toEqual(['target']);
    expect((await patch(dns.id, { target: 'example.com', dns: { recordType: 'A' } })).dns.recordType).toBe('A');
    const tls = await create({ resourceType: 'TLS', target: 'example.com:443', skipTLS: true });
    expect(await bad(tls.id, { resourceType: 'DNS', target: 'example.com' })).toEqual(['skipTLS']);
    expect((await patch(tls.id, { resourceType: 'DNS', target: 'example.com', skipTLS: false, tls: null })).dns).toEqual(DEFAULTS.dns);
  });
});
