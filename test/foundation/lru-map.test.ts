import { describe, expect, it } from 'vitest';
import { LruMap } from '../../src/lru-map.ts';

describe('LruMap', () => {
  it('drops the least recently used entry when full, and tells onEvict', () => {
    const evicted: string[] = [];
    const map = new LruMap<string, number>(2, (value, key) => evicted.push(`${key}=${value}`));
    map.set('a', 1).set('b', 2);
    expect(map.get('a')).toBe(1); // a is now the most recently used
    map.set('c', 3);
    expect(evicted).toEqual(['b=2']);
    expect(map.get('b')).toBeUndefined();
    map.set('a', 10); // replacing a present key evicts nothing
    expect(evicted).toEqual(['b=2']);
    expect(map.getOrSet('d', () => 4)).toBe(4);
    expect(evicted).toEqual(['b=2', 'c=3']);
    expect(map.getOrSet('a', () => 99)).toBe(10);
    expect([...map.values()]).toEqual([4, 10]);
    expect(map.size).toBe(2);
  });
});
