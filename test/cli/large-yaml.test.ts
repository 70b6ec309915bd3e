import { CORE_SCHEMA, load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadLargeYaml, splitResources } from '../../cli/apply/large-yaml.ts';

const whole = (text: string) => load(text, { schema: CORE_SCHEMA });

/** A large apply file read in slices of 10,000 resources gives what one parse of the whole file gives. */
describe('large apply files', () => {
  const item = (i: number, indent: string) =>
    `${indent}- name: site-${i}\n${indent}  type: HTTP\n${indent}  target: https://site-${i}.example.net/\n${indent}  # a comment\n\n${indent}  groups: [fleet, "b"]\n${indent}  conditions:\n${indent}    - "[STATUS] == 200"\n${indent}  body: |\n${indent}    - not an item\n${indent}    line two\n`;
  const file = (n: number, indent: string) =>
    `# fleet\ngroups:\n  - name: fleet\nresources: # all of them\n${Array.from({ length: n }, (_, i) => item(i, indent)).join('')}# after\nannouncements:\n  - name: a\n    kind: INFO\n    content: x\n    active: true\n`;

  it('reads 25,000 resources in slices as one parse would, items indented or not', () => {
    for (const indent of ['  ', '']) {
      const text = file(25_000, indent);
      const read = loadLargeYaml(text, 'fleet.yaml') as { resources: unknown[] };
      expect(read.resources).toHaveLength(25_000);
      expect(read).toEqual(whole(text));
      // Read in three slices, the rest of the file apart.
      const split = splitResources(text)!;
      expect(split.slices).toHaveLength(3);
      expect(whole(split.rest)).toMatchObject({ resources: null, groups: [{ name: 'fleet' }] });
    }
  });

  it('reads what the yaml package reads (core schema: a date stays a string)', () => {
    const text = `${file(3, '  ')}maintenance:\n  - name: m\n    start: 2026-01-01T00:00:00Z\n    on: yes\n`;
    expect(loadLargeYaml(text, 'f.yaml')).toEqual(parse(text));
  });

  it('falls back to one parse when slices cannot stand alone, errors included', () => {
    // An alias in the 10,001st item to an anchor in the first: in different slices.
    const items = Array.from({ length: 10_000 }, (_, i) => `  - name: ${i === 0 ? '&n ' : ''}r${i}\n    type: HTTP\n`).join('');
    const aliased = `resources:\n${items}  - name: x\n    groups: [*n]\n`;
    const read = loadLargeYaml(aliased, 'f.yaml') as { resources: Array<{ groups?: string[] }> };
    expect(read.resources[10_000].groups).toEqual(['r0']);
    expect(read).toEqual(whole(aliased));
    const flow = `resources: [{name: a, type: HTTP}]\ngroups: []\n`;
    expect(loadLargeYaml(flow, 'f.yaml')).toEqual(whole(flow));
    expect(() => loadLargeYaml('resources:\n  - name: a\n   bad: indent\n', 'f.yaml')).toThrow(/f\.yaml/);
  });
});
