import { describe, expect, it } from 'vitest';
import { hostKey } from '../../daemon/probes/host-key.ts';
import type { ProbeInput } from '../../daemon/probes/types.ts';

const key = (type: ProbeInput['type'], target: string, options?: ProbeInput['options'], recursive = false) =>
  hostKey({ type, target, recursive, options });

describe('the per-host concurrency key of each check type', () => {
  it('is whom the check talks to', () => {
    expect(key('HTTP', 'https://Example.com:8443/x')).toBe('example.com:8443');
    expect(key('WEBSOCKET', 'wss://example.com/feed')).toBe('example.com');
    expect(key('TCP', 'DB.internal:5432')).toBe('db.internal:5432');
    for (const type of ['TLS', 'UDP', 'GRPC', 'SSH'] as const) expect(key(type, 'Host.test:99')).toBe('host.test:99');
    expect(key('DOCKER', 'registry.test:5000/app:1')).toBe(key('DOCKER', 'registry.test:5000/other:2'));
  });

  it('PING: each address is its own host, not one registry for all', () => {
    expect(key('PING', '127.1.0.1')).toBe('127.1.0.1');
    expect(key('PING', '127.1.0.1')).not.toBe(key('PING', '127.1.0.2'));
  });

  it('DNS: the resolver asked, whatever the name asked about', () => {
    const via = (resolver: string | null) => ({ recordType: 'A' as const, resolver, transport: 'udp' as const });
    expect(key('DNS', 'a.test', via('127.0.0.1:5353'))).toBe(key('DNS', 'b.test', via('127.0.0.1:5353')));
    expect(key('DNS', 'a.test', via('127.0.0.1:5353'))).not.toBe(key('DNS', 'a.test', via('127.0.0.2:53')));
    expect(key('DNS', 'a.test', via(null))).toBe('dns:system');
  });
});
