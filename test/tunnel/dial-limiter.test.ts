import { describe, expect, it } from 'vitest';
import { DialLimiter, dialSource } from '../../daemon/tunnel/dial-limiter.ts';

/** Issue 14, finding 11: the per-source limit of refused agent dials, with a clock in the calls. */
describe('DialLimiter', () => {
  const refuse = (l: DialLimiter, source: string, now: number) => {
    expect(l.begin(source, now)).toBe(0);
    l.settle(source, true, now);
  };

  it('refuses every dial of a source after maxRefusals bad tokens, until the oldest leaves the window', () => {
    const l = new DialLimiter(3, 60_000);
    refuse(l, 'a', 0);
    refuse(l, 'a', 10_000);
    refuse(l, 'a', 20_000);
    expect(l.begin('a', 20_000)).toBe(40); // seconds until the refusal at 0 leaves the window
    expect(l.begin('a', 59_500)).toBe(1);
    expect(l.begin('b', 20_000)).toBe(0); // another source is not affected
    expect(l.begin('a', 60_000)).toBe(0); // one more try, then limited again
    l.settle('a', true, 60_000);
    expect(l.begin('a', 60_001)).toBe(10);
  });

  it('a good token is not counted, and concurrent lookups count against the limit', () => {
    const l = new DialLimiter(2, 60_000);
    expect(l.begin('a', 0)).toBe(0);
    l.settle('a', false, 0);
    // Two lookups under way fill the limit: a third concurrent try waits.
    expect(l.begin('a', 1)).toBe(0);
    expect(l.begin('a', 1)).toBe(0);
    expect(l.begin('a', 1)).toBe(1);
    l.settle('a', false, 2);
    l.settle('a', false, 2);
    expect(l.begin('a', 3)).toBe(0);
  });

  it('keeps at most maxTracked sources, least recently seen evicted first, and their counts still summed up', () => {
    const l = new DialLimiter(5, 60_000, 100);
    for (let i = 0; i < 100_000; i++) {
      refuse(l, `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, 0);
      expect(l.size).toBeLessThanOrEqual(100);
    }
    const { sources, others } = l.drain(0);
    expect(sources).toHaveLength(100);
    expect(sources.reduce((n, s) => n + s.badToken, 0) + others.badToken).toBe(100_000);
    // The most recent ones are those kept.
    expect(sources.map((s) => s.source)).toContain('10.1.134.159'); // i = 99,999
    expect(sources.map((s) => s.source)).not.toContain('10.0.0.0');
  });

  it("drain reports each source's counts once and forgets sources with nothing left in the window", () => {
    const l = new DialLimiter(2, 1_000);
    refuse(l, 'a', 0);
    refuse(l, 'a', 0);
    expect(l.begin('a', 10)).toBeGreaterThan(0);
    expect(l.drain(10).sources).toEqual([{ source: 'a', badToken: 2, limited: 1 }]);
    expect(l.drain(20).sources).toEqual([]);
    expect(l.size).toBe(1); // still limited: kept
    l.drain(1_000);
    expect(l.size).toBe(0);
  });

  it('settle says which refusal is the first of the interval', () => {
    const l = new DialLimiter(10, 60_000);
    l.begin('a', 0);
    expect(l.settle('a', true, 0)).toBe(true);
    l.begin('a', 0);
    expect(l.settle('a', true, 0)).toBe(false);
    l.drain(0);
    l.begin('a', 1);
    expect(l.settle('a', true, 1)).toBe(true);
  });
});

describe('dialSource', () => {
  it('IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64', () => {
    expect(dialSource('203.0.113.7')).toBe('203.0.113.7');
    expect(dialSource('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(dialSource('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(dialSource('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(dialSource('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(dialSource('::1')).toBe('0:0:0:0::/64');
    expect(dialSource(undefined)).toBe('unknown');
  });
});
