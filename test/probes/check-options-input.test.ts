import { describe, expect, it } from 'vitest';
import { boxFor } from '../../daemon/auth/secret-box.ts';
import { probeInputFromBody, probeInputOf, type ProbeRow } from '../../daemon/probes/probe-input.ts';

// ProbeInput.options (src/probes/types.ts) from a stored row (the scheduler, "check now") and from
// a body (`POST /admin/api/resources/test`): the type's object with every default, absent for the
// types without options and for a plain TCP connect.
const box = boxFor(new Uint8Array(32), 'resource-secrets');
const row = (resource_type: string, check_options: string | null): ProbeRow => ({
  id: 1,
  resource_type,
  target: 'x',
  skip_tls: 0,
  recursive: 0,
  interval_seconds: 60,
  next_run_at: null,
  active: 1,
  quorum: 'majority',
  conditions: null,
  http_request: null,
  http_secrets: null,
  timeout_seconds: null,
  upside_down: null,
  check_options,
});

describe('ProbeInput.options', () => {
  it('from a row: the stored object with the defaults it lacks', () => {
    expect(probeInputOf(row('DNS', '{"recordType":"MX"}'), box).options).toEqual({ recordType: 'MX', resolver: null, transport: 'udp' });
    expect(probeInputOf(row('PING', null), box).options).toEqual({ count: 3, intervalMs: 200, family: 'auto' });
  });

  it('absent for HTTP, DOCKER, SSH and a plain TCP connect', () => {
    for (const type of ['HTTP', 'DOCKER', 'SSH', 'TCP']) expect(probeInputOf(row(type, null), box).options, type).toBeUndefined();
    expect(probeInputOf(row('TCP', '{"send":null,"expect":null}'), box).options).toBeUndefined();
  });

  it('from a body exactly as from the row create stores', () => {
    const body = { name: 't', resourceType: 'TCP' as const, target: '127.0.0.1:1', tcp: { expect: '+PONG' } };
    expect(probeInputFromBody(body).options).toEqual({ send: null, sendEncoding: 'text', expect: '+PONG', expectKind: 'text' });
    expect(probeInputFromBody({ name: 't', resourceType: 'TCP', target: '127.0.0.1:1' }).options).toBeUndefined();
    expect(probeInputFromBody({ name: 't', resourceType: 'GRPC', target: '127.0.0.1:1' }).options).toEqual({ service: '', tls: false });
  });
});
