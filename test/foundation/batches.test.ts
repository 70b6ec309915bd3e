import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { shapedChunks } from '../../daemon/store/batches.ts';

describe('shapedChunks', () => {
  it('cuts any batch into a few fixed sizes, in order, none over the cap, at most three of each smaller size', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 2000 }), fc.constantFrom(1, 4, 16, 64, 100, 256, 1000), (items, max) => {
        const parts = shapedChunks(items, max);
        expect(parts.flat()).toEqual(items);
        const sizes = parts.map((p) => p.length);
        for (const n of sizes) expect([256, 64, 16, 4, 1]).toContain(n);
        for (const n of sizes) expect(n).toBeLessThanOrEqual(max);
        expect(sizes).toEqual([...sizes].sort((a, b) => b - a));
        const largest = sizes[0];
        for (const n of new Set(sizes)) if (n !== largest) expect(sizes.filter((x) => x === n).length).toBeLessThanOrEqual(3);
      }),
    );
  });

  it('keeps the distinct statement shapes of a thousand batch sizes to five', () => {
    const shapes = new Set<number>();
    for (let n = 0; n < 1000; n++) for (const part of shapedChunks(new Array(n).fill(0), 256)) shapes.add(part.length);
    expect([...shapes].sort((a, b) => a - b)).toEqual([1, 4, 16, 64, 256]);
  });
});
