import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/daemon.ts';
import { runMonctl, tempHome } from './run.ts';

const home = tempHome();
afterAll(() => home.cleanup());
/** No daemon: a file refused by validation makes no request (a request to port 1 would exit 1). */
const NOWHERE = { MONCTL_SERVER: 'http://127.0.0.1:1' };
const file = (name: string, text: string) => {
  const path = join(home.dir, name);
  writeFileSync(path, text);
  return path;
};

describe('apply file fields (issue 25 item 8)', () => {
  it('--help-fields prints the reference, and the README shows the same text', async () => {
    const res = await runMonctl(['apply', '--help-fields'], { env: NOWHERE });
    expect(res.code, res.stderr).toBe(0);
    for (const section of ['groups:', 'resources:', 'announcements:', 'notifiers:', 'alertRules:', 'maintenance:', 'statusPages:']) {
      expect(res.stdout).toMatch(new RegExp(`^${section} `, 'm'));
    }
    expect(res.stdout).toMatch(/^ {2}intervalSeconds +integer 10\.\.86400 — /m);
    expect(res.stdout).toMatch(/CERT_RENEWAL_FAILED/);
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const shown = /<!-- apply-fields:start -->\n```text\n([\s\S]*?)```\n<!-- apply-fields:end -->/.exec(readme)?.[1];
    expect(shown, 'README: paste the output of monctl apply --help-fields between the apply-fields markers').toBe(res.stdout);
  });

  it('an unknown key exits 2 naming its path and the nearest field, before any request', async () => {
    const path = file(
      'typo.yaml',
      [
        'resources:',
        '  - name: web',
        '    type: HTTP',
        '    target: https://example.com/',
        '    intervallSeconds: 30',
        'alertrules: []',
        'statusPages:',
        '  - slug: main',
        '    title: Main',
        '    showIncident: true',
        'notifiers:',
        '  - name: hook',
        '    type: WEBHOOK',
        '    url: https://example.com/h',
        '    signingSecrets: x',
        'maintenance:',
        '  - name: w',
        '    startAt: 2026-12-01T22:00:00Z',
        '    endsAt: 2026-12-01T23:00:00Z',
        '    resources: [web]',
        '',
      ].join('\n'),
    );
    const res = await runMonctl(['apply', '-f', path], { env: NOWHERE });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^error: .*typo\.yaml is invalid; nothing was changed:$/m);
    expect(res.stderr).toMatch(/^ {2}resources\[0\]\.intervallSeconds: unknown field \(did you mean intervalSeconds\?\)$/m);
    expect(res.stderr).toMatch(/^ {2}alertrules: unknown section \(did you mean alertRules\?\)$/m);
    expect(res.stderr).toMatch(/^ {2}statusPages\[0\]\.showIncident: unknown field \(did you mean showIncidents\?\)$/m);
    expect(res.stderr).toMatch(/^ {2}notifiers\[0\]\.signingSecrets: unknown field \(did you mean signingSecret\?\)/m);
    expect(res.stderr).toMatch(/^ {2}maintenance\[0\]\.startAt: unknown field \(did you mean startsAt\?\)$/m);
    const far = await runMonctl(['apply', '-f', file('far.yaml', 'groups:\n  - name: g\n    colour: red\n')], { env: NOWHERE });
    expect(far.code).toBe(2);
    expect(far.stderr).toMatch(/groups\[0\]\.colour: unknown field \(one of name, visibility; see monctl apply --help-fields\)/);
  });
});
