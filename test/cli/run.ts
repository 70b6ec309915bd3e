import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  json(): any;
}

export interface RunOptions {
  input?: string;
  env?: Record<string, string | undefined>;
}

/**
 * Runs the real `bin/monctl` as a child process. stdin is a pipe (not a TTY),
 * as in a script; the environment is scrubbed of MONCTL_* and XDG_* so that
 * the developer's own config never leaks into a test.
 */
export function runMonctl(args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(MONCTL_|XDG_|NO_COLOR)/.test(k)) base[k] = v;
  const env: Record<string, string> = { ...base };
  for (const [k, v] of Object.entries(opts.env ?? {})) if (v !== undefined) env[k] = v;
  return new Promise((resolve, reject) => {
    const child = spawn(join(ROOT, 'bin/monctl'), args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, json: () => JSON.parse(stdout) }));
    child.stdin.end(opts.input ?? '');
  });
}

/** A temp dir per test file for config and data paths; removed by `cleanup()`. */
export function tempHome() {
  const dir = mkdtempSync(join(tmpdir(), 'monctl-cli-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `monctl` against this daemon with its ADMIN key in MONCTL_API_KEY. */
export function adminRunner(d: TestDaemon, configDir: string) {
  return (args: string[], opts: RunOptions = {}) =>
    runMonctl(args, {
      ...opts,
      env: {
        MONCTL_SERVER: d.url,
        MONCTL_API_KEY: d.adminKey,
        MONCTL_CONFIG_DIR: configDir,
        XDG_DATA_HOME: join(configDir, 'nodata'),
        ...opts.env,
      },
    });
}

export interface AdminCli {
  /** The daemon, started in beforeAll. */
  readonly d: TestDaemon;
  /** The temp config dir. */
  readonly home: ReturnType<typeof tempHome>;
  /** `monctl` as the daemon's ADMIN (usable once beforeAll has run). */
  monctl(args: string[], opts?: RunOptions): Promise<RunResult>;
  /** Writes `text` to `name` in the temp dir; its path. */
  file(name: string, text: string): string;
}

/**
 * The set-up most CLI test files share: one daemon and one temp config dir
 * for the whole file, stopped and removed after it.
 */
export function useAdminCli(): AdminCli {
  let d: TestDaemon | undefined;
  let home: ReturnType<typeof tempHome> | undefined;
  let run: ReturnType<typeof adminRunner> | undefined;
  beforeAll(async () => {
    d = await startDaemon();
    home = tempHome();
    run = adminRunner(d, home.dir);
  });
  afterAll(async () => {
    await d?.stop();
    home?.cleanup();
  });
  const ready = <T>(x: T | undefined): T => {
    if (x === undefined) throw new Error('useAdminCli: used before beforeAll ran');
    return x;
  };
  return {
    get d() {
      return ready(d);
    },
    get home() {
      return ready(home);
    },
    monctl: (args, opts) => ready(run)(args, opts),
    file: (name, text) => {
      const path = join(ready(home).dir, name);
      writeFileSync(path, text);
      return path;
    },
  };
}
