import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/daemon.ts';
import { installLine, missingPackages, REQUIRED_TOOLS } from '../setup/provision.ts';

describe('test provisioning', () => {
  it('names each missing package once, from the commands that are absent', () => {
    const has = (command: string) => command === 'tmux';
    const missing = missingPackages({ tmux: 'tmux', promtool: 'prometheus', skopeo: 'skopeo', other: 'skopeo' }, has);
    expect(missing).toEqual(['prometheus', 'skopeo']);
    expect(installLine(missing)).toBe('apt-get install -y --no-install-recommends prometheus skopeo');
  });

  it('every required tool is present once the global setup has run', () => {
    expect(missingPackages()).toEqual([]);
    expect(Object.keys(REQUIRED_TOOLS)).toContain('chromium');
    // The servers and tools the suites start themselves (a merge once left PostgreSQL in the bench's list only).
    expect(Object.values(REQUIRED_TOOLS)).toEqual(expect.arrayContaining(['postgresql', 'pebble', 'iproute2', 'docker-registry']));
  });

  it('as a non-root user with the tools missing, it stops at once with the exact apt-get line', () => {
    // Only the project's Node on PATH: every Debian tool looks missing.
    const nodeDir = dirname(process.execPath);
    const script = `import(${JSON.stringify(join(ROOT, 'test/setup/provision.ts'))}).then((m) => m.default())`;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      uid: 65534,
      gid: 65534,
      encoding: 'utf8',
      env: { PATH: nodeDir, HOME: '/tmp' },
    });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('as root, run:');
    expect(result.stderr).toContain(`apt-get update && ${installLine(missingPackages(REQUIRED_TOOLS, () => false))}`);
    expect(result.stderr).not.toContain('provision: installing');
  });
});
