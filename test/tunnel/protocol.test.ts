import { describe, expect, it } from 'vitest';
import { backoffDelay, endToEndHeaders, hostWithoutPort } from '../../src/tunnel/protocol.ts';

describe('tunnel protocol helpers', () => {
  it('keeps end-to-end headers only', () => {
    expect(
      endToEndHeaders({
        ':path': '/',
        connection: 'keep-alive, X-Private',
        'x-private': '1',
        'keep-alive': 'timeout=5',
        'transfer-encoding': 'chunked',
        upgrade: 'websocket',
        host: 'a',
        te: 'trailers',
        'x-monctl-target': 'http://x',
        'Content-Type': 'text/plain',
        'set-cookie': ['a', 'b'],
      }),
    ).toEqual({ 'content-type': 'text/plain', 'set-cookie': ['a', 'b'] });
  });

  it('takes the port off a Host header', () => {
    expect(hostWithoutPort('App.Example:8081')).toBe('app.example');
    expect(hostWithoutPort('[::1]:8081')).toBe('[::1]');
    expect(hostWithoutPort('[::1]')).toBe('[::1]');
    expect(hostWithoutPort(undefined)).toBe('');
  });

  it('backs off exponentially from 1 s to 30 s with jitter', () => {
    for (let attempt = 0; attempt < 12; attempt++) {
      const ceiling = Math.min(30_000, 1_000 * 2 ** (attempt + 1));
      for (let i = 0; i < 50; i++) {
        const d = backoffDelay(attempt);
        expect(d).toBeGreaterThanOrEqual(Math.max(1_000, ceiling / 2));
        expect(d).toBeLessThanOrEqual(ceiling);
      }
    }
  });
});
