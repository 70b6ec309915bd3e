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
