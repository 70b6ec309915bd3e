import { CORE_SCHEMA, load } from 'js-yaml';

/** Items of the `resources:` sequence read per slice. */
const SLICE = 10_000;

/**
 * A large apply file read by js-yaml's core schema (the YAML 1.2 core schema the `yaml` package
 * reads with: no timestamps, no merge keys). The top-level `resources:` block sequence is read in
 * slices of 10,000 items, the rest of the document apart: one parse of a million items kept every
 * intermediate value alive at once (3.3 GB of RSS for 144 MB); slices let them die young.
 * Anything the slices cannot read alone (an alias to an anchor in another item, a flow
 * sequence, a second `resources:` key) falls back to one parse of the whole text, which also
 * gives its errors.
 */
export function loadLargeYaml(text: string, file: string): unknown {
  const parse = (t: string) => load(t, { schema: CORE_SCHEMA, filename: file });
  const split = splitResources(text);
  if (!split) return parse(text);
  try {
    const doc = parse(split.rest) as Record<string, unknown> | null;
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc) || doc.resources !== null) return parse(text);
    const items: unknown[] = [];
    for (const slice of split.slices) {
      const part = parse(slice);
      if (!Array.isArray(part)) return parse(text);
      for (const item of part) items.push(item);
    }
    doc.resources = items;
    return doc;
  } catch {
    return parse(text);
  }
}

/**
 * The text without the items of its top-level `resources:` block sequence (`rest`, where
 * `resources:` is then null), and those items cut at every 10,000th `- ` at the sequence's
 * indentation; undefined when the file has no such sequence.
 */
export function splitResources(text: string): { rest: string; slices: string[] } | undefined {
  const key = /^resources:[ \t]*(#.*)?$/m.exec(text);
  if (!key) return undefined;
  const start = text.indexOf('\n', key.index) + 1;
  if (start === 0) return undefined;
  const first = /^([ ]*)-( |$)/m.exec(text.slice(start));
  if (!first) return undefined;
  const indent = first[1].length;
  // The sequence runs while lines are blank, comments, or at least as indented as its items
  // (with items at column 0, while they start with `-`).
  let end = start;
  const itemStarts: number[] = [];
  const dash = `${' '.repeat(indent)}-`;
  while (end < text.length) {
    const next = text.indexOf('\n', end);
    const lineEnd = next < 0 ? text.length : next + 1;
    const line = text.slice(end, lineEnd);
    const body = line.trimStart();
    const lead = line.length - body.length;
    const blank = body === '' || body.startsWith('#') || body === '\n' || body === '\r\n';
    if (!blank) {
      if (line.startsWith(dash) && /^-(\s|$)/.test(line.slice(indent))) itemStarts.push(end);
      else if (lead < indent || (indent === 0 && lead === 0)) break;
    }
    end = lineEnd;
  }
  if (itemStarts.length === 0) return undefined;
  const slices: string[] = [];
  for (let i = 0; i < itemStarts.length; i += SLICE) {
    const from = i === 0 ? start : itemStarts[i];
    slices.push(text.slice(from, i + SLICE < itemStarts.length ? itemStarts[i + SLICE] : end));
  }
  return { rest: text.slice(0, start) + text.slice(end), slices };
}
