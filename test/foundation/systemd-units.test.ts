import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/daemon.ts';

/**
 * `systemd-analyze verify` (Debian's `systemd` package) on the shipped units.
 * verify also checks that ExecStart's binary exists: the units name the
 * installed /usr/local/bin/monctl, so each is verified as a copy whose ExecStart
 * is this checkout's bin/monctl, and nothing else changed. verify exits 0 on
 * many mistakes (an unknown key, a bad value: "ignoring"), so any output fails.
 */
const UNITS = ['monctl.service', 'monctl-agent.service'];
const INSTALLED = '/usr/local/bin/monctl';
const dir = mkdtempSync(join(tmpdir(), 'monctl-units-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const shipped = (unit: string) => readFileSync(join(ROOT, 'contrib/systemd', unit), 'utf8');

/** verify on `text` saved as `unit` in the temp dir: exit code and everything it printed. */
function verify(unit: string, text: string) {
  const file = join(dir, unit);
  writeFileSync(file, text.replaceAll(INSTALLED, join(ROOT, 'bin/monctl')));
  const run = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8', env: { ...process.env, SYSTEMD_LOG_COLOR: '0' } });
  if (run.error) throw new Error(`systemd-analyze: ${run.error.message} (install Debian's systemd package)`);
  return { code: run.status, output: `${run.stdout}${run.stderr}`.trim() };
}

/** `Key=value` lines of a unit (comments dropped), for the hardening checks. */
const settings = (text: string) => text.split('\n').filter((l) => /^\w+=/.test(l));

describe('contrib/systemd units', () => {
  for (const unit of UNITS) {
    it(`${unit} passes systemd-analyze verify without a word`, () => {
      const text = shipped(unit);
      expect(text).toContain(`ExecStart=${INSTALLED} `);
      expect(verify(unit, text)).toEqual({ code: 0, output: '' });
    });

    it(`${unit} fails verify with a typo in a key or a value`, () => {
      const text = shipped(unit);
      const typoKey = verify(unit, text.replace('NoNewPrivileges=yes', 'NoNewPrivilege=yes'));
      expect(typoKey.output).toMatch(/Unknown key .*NoNewPrivilege/);
      const typoValue = verify(unit, text.replace('ProtectSystem=strict', 'ProtectSystem=strcit'));
      expect(typoValue.output).toMatch(/strcit/);
      const missingBinary = verify(unit, text.replace(`ExecStart=${INSTALLED}`, 'ExecStart=/nonexistent/monctl'));
      expect(missingBinary.code).not.toBe(0);
    });

    it(`${unit} is hardened: own user, read-only system, no new privileges, restarted on failure`, () => {
      const lines = settings(shipped(unit));
      expect(lines).toEqual(
        expect.arrayContaining([
          'DynamicUser=yes',
          'ProtectSystem=strict',
          'ProtectHome=yes',
          'NoNewPrivileges=yes',
          'PrivateTmp=yes',
          'CapabilityBoundingSet=',
          'Restart=on-failure',
        ]),
      );
      expect(lines.some((l) => l.startsWith('RestrictAddressFamilies='))).toBe(true);
    });
  }

  it("the daemon keeps its data in StateDirectory and reads /etc/monctl/monctl.yaml; the agent's token is a credential", () => {
    const daemon = settings(shipped('monctl.service'));
    expect(daemon).toEqual(expect.arrayContaining(['StateDirectory=monctl', 'ConfigurationDirectory=monctl']));
    expect(daemon).toContain(`ExecStart=${INSTALLED} daemon --config %E/monctl/monctl.yaml --data-dir %S/monctl`);
    const agent = settings(shipped('monctl-agent.service'));
    expect(agent).toContain('LoadCredential=token:/etc/monctl/agent.token');
    expect(agent).toContain(`ExecStart=${INSTALLED} agent --token-file \${CREDENTIALS_DIRECTORY}/token`);
  });
});
