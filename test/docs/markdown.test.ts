import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALERT_EVENT_KINDS } from '../../src/api/schemas/alert-rules.ts';
import { ROOT } from '../helpers/daemon.ts';

/** README.md and every Markdown file under docs/. */
const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
];

/**
 * The lines of fences that are never closed. A fence opens with 3+ backticks
 * or tildes (any indent, for list items) and closes with the same character,
 * at least as many, and nothing after them (CommonMark). A fence with an info
 * string inside an open block (```sh while ```yaml is open) would close it but
 * for its info string: CommonMark reads it as code, and the block swallows
 * what follows up to the next bare fence, so the count stays even while the
 * page renders wrong (issue 25: the notifiers example ate "Status pages and
 * badges"). It counts as the opener left unclosed.
 */
function unclosedFences(text: string): number[] {
  const unclosed: number[] = [];
  let open: { char: string; length: number; line: number } | undefined;
  text.split('\n').forEach((line, i) => {
    const m = /^\s*(`{3,}|~{3,})(.*)$/.exec(line);
    if (!m) return;
    const closes = open && m[1][0] === open.char && m[1].length >= open.length;
    if (!open) open = { char: m[1][0], length: m[1].length, line: i + 1 };
    else if (closes && m[2].trim() === '') open = undefined;
    else if (closes) {
      unclosed.push(open.line);
      open = { char: m[1][0], length: m[1].length, line: i + 1 };
    }
  });
  return open ? [...unclosed, open.line] : unclosed;
}

describe('Markdown docs (issue 25 item 9)', () => {
  it('the fence counter finds an unclosed fence', () => {
    expect(unclosedFences('a\n```yaml\nx: 1\n## Next\n')).toEqual([2]);
    expect(unclosedFences('```yaml\nx: 1\n## Next\n```sh\nls\n```\n')).toEqual([1]);
    expect(unclosedFences('```sh\nls\n```\n````md\n```\n````\n')).toEqual([]);
  });

  it.each(FILES)('%s closes every code fence', (file) => {
    expect(unclosedFences(readFileSync(join(ROOT, file), 'utf8')), `${file}: the fence opened on this line is never closed`).toEqual([]);
  });

  it('every README list of alert events names every kind (the API schema is the one list)', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    // A list of the rules' events is a paragraph naming CERT_EXPIRING with two other kinds (the incident lifecycle paragraph names no CERT_ kind).
    const lists = readme
      .split(/\n\s*\n/)
      .filter((p) => p.includes('CERT_EXPIRING') && ALERT_EVENT_KINDS.filter((k) => p.includes(k)).length >= 3);
    expect(lists.length).toBeGreaterThanOrEqual(2);
    for (const list of lists) for (const kind of ALERT_EVENT_KINDS) expect(list, kind).toContain(kind);
  });

  it('alert-rules --help lists every event kind', () => {
    const help = execFileSync(join(ROOT, 'bin/monctl'), ['alert-rules', 'add', '--help'], { encoding: 'utf8' }).replace(/\s+/g, ' ');
    for (const kind of ALERT_EVENT_KINDS) expect(help).toContain(kind);
  });

  it('daemon --help gives the log format default as the rule, pretty on a terminal, also when piped', () => {
    const help = execFileSync(join(ROOT, 'bin/monctl'), ['daemon', '--help'], { encoding: 'utf8' }).replace(/\s+/g, ' ');
    expect(help).toMatch(/--log-format <format> .*\(default: pretty on a terminal, else json, env: MONCTL_LOG_FORMAT\)/);
    expect(help).not.toMatch(/--log-format <format> [^-]*default: "json"/);
  });
});
