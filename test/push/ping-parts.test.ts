import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/errors.ts';
import { textOf } from '../../daemon/push/ping-body.ts';
import { isPingPath, parsePing, pathOf } from '../../daemon/push/ping-path.ts';
import { RateLimiter } from '../../daemon/push/rate-limit.ts';

const UUID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const KEY = 'k3y-abcdefghijklmnop';

function parse(url: string) {
  const { path, query } = pathOf(url);
  return parsePing(path, query);
}

/** The field a refused path names. */
function refused(url: string): string | undefined {
  try {
    parse(url);
  } catch (err) {
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(400);
    return (err as HttpError).errors?.[0]?.field;
  }
  throw new Error(`${url} was accepted`);
}

describe('ping paths', () => {
  it('reads each kind under a uuid, in any case', () => {
    expect(parse(`/ping/${UUID.toUpperCase()}`)).toEqual({ ref: { uuid: UUID }, kind: 'success', exitCode: null, create: false });
    expect(parse(`/ping/${UUID}/start`).kind).toBe('start');
    expect(parse(`/ping/${UUID}/fail`).kind).toBe('fail');
    expect(parse(`/ping/${UUID}/log`).kind).toBe('log');
    expect(parse(`/ping/${UUID}/0`)).toMatchObject({ kind: 'success', exitCode: 0 });
    expect(parse(`/ping/${UUID}/3`)).toMatchObject({ kind: 'fail', exitCode: 3 });
    expect(parse(`/ping/${UUID}/255`)).toMatchObject({ kind: 'fail', exitCode: 255 });
    expect(parse(`http://example.test/ping/${UUID}?x=1`).ref).toEqual({ uuid: UUID });
  });

  it('reads key and slug, and ?create=1', () => {
    expect(parse(`/ping/${KEY}/nightly-backup/start?create=1`)).toEqual({
      ref: { key: KEY, slug: 'nightly-backup' },
      kind: 'start',
      exitCode: null,
      create: true,
    });
    expect(parse(`/ping/${KEY}/n%69ghtly`).ref).toEqual({ key: KEY, slug: 'nightly' });
  });

  it('refuses bad exit codes, naming exitCode', () => {
    for (const bad of ['999', '256', '-1', '01', '01x', '1.0', '', 'START', '%']) {
      expect(refused(`/ping/${UUID}/${bad}`), bad).toBe('exitCode');
    }
  });

  it('refuses path tricks, naming the part', () => {
    expect(refused('/ping/x/999')).toBe('uuid');
    expect(refused('/ping/not-a-uuid')).toBe('uuid');
    expect(refused('/ping/')).toBe('uuid');
    expect(refused('/ping/..')).toBe('uuid');
    expect(refused(`/ping/${UUID}/start/extra`)).toBe('path');
    expect(refused(`/ping/${KEY}`)).toBe('path');
    for (const slug of ['..', '%2e%2e', '%2E%2E', 'a%2fb', 'a%252fb', '%00', 'Upper', '-x', 'x-', 'a%20b', '%c0%ae']) {
      expect(refused(`/ping/${KEY}/${slug}`), slug).toBe('slug');
    }
  });

  it('knows its paths', () => {
    expect(isPingPath('/ping')).toBe(true);
    expect(isPingPath('/ping/x')).toBe(true);
    expect(isPingPath('/pings')).toBe(false);
    expect(isPingPath('/api/ping')).toBe(false);
  });
});

describe('ping bodies', () => {
  it('replaces invalid UTF-8 and NUL', () => {
    expect(textOf(Buffer.from([0x61, 0xff, 0x00, 0x62]))).toBe('a\uFFFD\uFFFDb');
  });
});

describe('rate limiter', () => {
  it('allows the burst, then the rate, and says how long to wait', () => {
    const limiter = new RateLimiter({ perSecond: 2, burst: 3 }, 10);
    expect([0, 0, 0].map(() => limiter.take('a', 0))).toEqual([0, 0, 0]);
    expect(limiter.take('a', 0)).toBe(1);
    expect(limiter.take('b', 0)).toBe(0); // another key has its own bucket
    expect(limiter.take('a', 500)).toBe(0); // half a second at 2/s: one token back
    expect(limiter.take('a', 500)).toBeGreaterThan(0);
  });

  it('keeps at most maxKeys buckets, forgetting the least recently used', () => {
    const limiter = new RateLimiter({ perSecond: 1, burst: 1 }, 100);
    for (let i = 0; i < 10_000; i++) limiter.take(`10.0.${i >> 8}.${i & 255}`, 0);
    expect(limiter.size).toBe(100);
  });
});
