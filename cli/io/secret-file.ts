import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ExitCode, MonctlError } from '../../src/errors.ts';

/**
 * A file for a secret (`agents token --output-file`), created mode 0600 from
 * the start (never written wider and chmod-ed after). It is opened before the
 * secret exists, so a path that cannot be written fails before a token is
 * rotated and lost. An existing file is refused unless `force`; with `force`
 * the secret goes to a new 0600 file beside it, renamed over it, so readers
 * see the old token or the new one, never a partial file.
 */
export interface SecretFile {
  /** Writes the secret and a newline, syncs and closes (renames into place with force). */
  write(secret: string): void;
  /** Removes what open created (the secret was never made). */
  abandon(): void;
}

export function openSecretFile(path: string, force: boolean): SecretFile {
  const target = force ? join(dirname(path), `.${basename(path)}.${process.pid}.tmp`) : path;
  let fd: number;
  try {
    fd = openSync(target, 'wx', 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' && !force)
      throw new MonctlError('usage', `${path} exists; nothing was changed (--force replaces it)`, ExitCode.usage);
    throw new MonctlError('io', `cannot create ${path}: ${code ?? (err as Error).message}; nothing was changed`);
  }
  let open = true;
  const close = () => {
    if (open) closeSync(fd);
    open = false;
  };
  return {
    write(secret) {
      try {
        writeSync(fd, `${secret}\n`);
        fsyncSync(fd);
        close();
        if (force) renameSync(target, path);
      } catch (err) {
        close();
        throw new MonctlError(
          'io',
          `cannot write ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message} (the secret was made but not saved: make a new one)`,
          ExitCode.error,
          { cause: err },
        );
      }
    },
    abandon() {
      close();
      try {
        unlinkSync(target);
      } catch {
        // already gone
      }
    },
  };
}
