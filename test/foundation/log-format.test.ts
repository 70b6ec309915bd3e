import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { tempHome } from '../cli/run.ts';
import { ADMIN_PASSWORD, ROOT } from '../helpers/daemon.ts';
import { until } from '../helpers/http.ts';

const home = tempHome();
const procs: ChildProcess[] = [];
afterAll(() => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  home.cleanup();
});

const cleanEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MONCTL_')));

/** `bin/monctl ...` with stdout on a pipe, as under systemd or in a script. */
function launch(args: string[]) {
  const proc = spawn(join(ROOT, 'bin/monctl'), args, {
    env: { ...cleanEnv(), MONCTL_ADMIN_PASSWORD: ADMIN_PASSWORD },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  procs.push(proc);
  const out = { stdout: '', stderr: '' };
  proc.stdout!.on('data', (c) => (out.stdout += c));
  proc.stderr!.on('data', (c) => (out.stderr += c));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', resolve));
  return { proc, out, exited };
}

describe('log format', () => {
  it('defaults to pretty on a terminal and to JSON on a pipe', async () => {
    // util-linux `script` gives the command a pseudo-terminal.
    const run = promisify(execFile);
    const tty = await run('script', ['-qec', `${join(ROOT, 'bin/monctl')} daemon --print-config`, '/dev/null'], { env: cleanEnv() });
    expect(tty.stdout).toMatch(/^logFormat: pretty {2}# default\r?$/m);
    const pipe = await run(join(ROOT, 'bin/monctl'), ['daemon', '--print-config'], { env: cleanEnv() });
    expect(pipe.stdout).toMatch(/^logFormat: json {2}# default$/m);
  });

  it('the daemon writes human-readable lines with --log-format pretty, even on a pipe', { timeout: 60_000 }, async () => {
    const d = launch([
      'daemon',
      '--listen',
      '127.0.0.1:0',
      '--edge-listen',
      '127.0.0.1:0',
      '--data-dir',
      join(home.dir, 'data'),
      '--log-format',
      'pretty',
    ]);
    await until(() => d.out.stdout.includes('listening') || d.proc.exitCode !== null);
    const line = d.out.stdout.split('\n').find((l) => l.includes('listening'))!;
    expect(line, d.out.stderr).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] INFO.*: listening/);
    expect(() => JSON.parse(line)).toThrow();
    expect(d.out.stdout).toMatch(/^ {4}api: "http:\/\/127\.0\.0\.1:\d+"$/m);
    d.proc.kill('SIGTERM');
    expect(await d.exited).toBe(0);
    expect(d.out.stdout).toMatch(/INFO.*: stopped/);
  });

  it('the agent takes --log-format too', { timeout: 60_000 }, async () => {
    const token = join(home.dir, 'agent.token');
    writeFileSync(token, 'not-a-real-token\n');
    const base = ['agent', '--server', 'http://127.0.0.1:1', '--token-file', token];
    const pretty = launch([...base, '--log-format', 'pretty']);
    await until(() => pretty.out.stdout.includes('agent starting') || pretty.proc.exitCode !== null);
    expect(pretty.out.stdout, pretty.out.stderr).toMatch(/^\[[^\]]+\] INFO.*: agent starting/m);
    const json = launch(base);
    await until(() => json.out.stdout.includes('agent starting') || json.proc.exitCode !== null);
    expect(JSON.parse(json.out.stdout.split('\n')[0])).toMatchObject({ msg: 'agent starting', component: 'agent' });
    for (const run of [pretty, json]) {
      run.proc.kill('SIGTERM');
      await run.exited;
    }
  });
});
