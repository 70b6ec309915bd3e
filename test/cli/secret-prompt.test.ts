import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { ROOT } from '../helpers/daemon.ts';
import { until } from '../helpers/http.ts';
import { useRequestTarget } from './request-target.ts';
import { useAdminCli } from './run.ts';

/**
 * `resources add --secret-header NAME --basic-auth USER` in a real terminal (tmux): each secret is
 * asked for with a hidden prompt, in the documented order, and what is typed never shows on the
 * screen; the check then sends it.
 */
const cli = useAdminCli();
const target = useRequestTarget('/tty');
const HEADER_SECRET = 'typed-hdr-6e0b3c';
const PASSWORD = 'typed-pw-91d7aa';

const socket = `monctl-secret-prompt-${process.pid}`;
const tmux = (...args: string[]) =>
  execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
const screen = () => tmux('capture-pane', '-p', '-t', 'secrets');
afterAll(() => {
  try {
    tmux('kill-server');
  } catch {
    // already gone
  }
});

it('asks for each secret with a hidden prompt on a terminal; the typed values never show, and reach the target', async () => {
  const env = [
    `MONCTL_SERVER=${cli.d.url}`,
    `MONCTL_API_KEY=${cli.d.adminKey}`,
    `MONCTL_CONFIG_DIR=${cli.home.dir}`,
    `XDG_DATA_HOME=${join(cli.home.dir, 'nodata')}`,
  ].join(' ');
  const add = `${join(ROOT, 'bin/monctl')} resources add tty --target ${target.url} --inactive --secret-header X-Api-Key --basic-auth bob`;
  tmux('new-session', '-d', '-s', 'secrets', '-x', '160', '-y', '20', `sh -c '${env} ${add}; echo EXIT=$?; sleep 120'`);
  await until(() => /Value of header X-Api-Key: *$/m.test(screen()));
  tmux('send-keys', '-t', 'secrets', '-l', HEADER_SECRET);
  tmux('send-keys', '-t', 'secrets', 'Enter');
  await until(() => /Password of bob: *$/m.test(screen()));
  tmux('send-keys', '-t', 'secrets', '-l', PASSWORD);
  tmux('send-keys', '-t', 'secrets', 'Enter');
  await until(() => /EXIT=\d+/.test(screen()));
  const shown = screen();
  expect(shown).toMatch(/Created resource tty/);
  expect(shown).toMatch(/EXIT=0/);
  expect(shown).not.toContain(HEADER_SECRET);
  expect(shown).not.toContain(PASSWORD);

  const id = (await cli.d.admin.call(operations.listAdminResources)).find((r) => r.name === 'tty')!.id;
  target.seen.length = 0;
  await cli.d.admin.call(operations.checkResource, { params: { id } });
  expect(target.seen[0].headers).toMatchObject({
    'x-api-key': HEADER_SECRET,
    authorization: `Basic ${Buffer.from(`bob:${PASSWORD}`).toString('base64')}`,
  });
}, 90_000);
