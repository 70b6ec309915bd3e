import type { Command } from 'commander';
import { MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import { configPath } from '../config/config-file.ts';
import { localKeyPath } from '../config/connection.ts';
import { act, withOutput } from '../runtime.ts';

/**
 * `monctl info`: what the CLI resolved (server, credential, config) and, from
 * the daemon, who that credential is. Always contacts the server (`/api/me`
 * with a credential, the health endpoint without), so an unreachable daemon
 * or a rejected key shows: what is known is printed, then the error on stderr
 * with its exit code (1 unreachable, 4 rejected).
 */
export function register(program: Command): void {
  withOutput(program.command('info').description('which server, which credential, which config, and who you are')).action(
    act(async (rt) => {
      const c = rt.conn;
      const info: Record<string, unknown> = {
        server: c.server,
        serverSource: c.serverSource,
        credential: c.credentialSource,
        context: c.context ?? null,
        configFile: configPath(),
        localKeyFile: localKeyPath(),
        caFile: c.caFile ?? null,
        reachable: false,
        user: null,
        role: null,
        via: null,
        error: null,
      };
      let failure: MonctlError | undefined;
      try {
        if (c.apiKey) {
          const me = await rt.client.call(ops.me);
          Object.assign(info, { user: me.username, role: me.role, via: me.via });
        } else await rt.client.call(ops.health);
        info.reachable = true;
      } catch (err) {
        if (!(err instanceof MonctlError)) throw err;
        failure = err;
        info.error = err.message;
        // An answer, even a refusal, means the server is there; a connection error does not.
        info.reachable = err.code !== 'connection';
      }
      const fields = Object.keys(info);
      await rt.show(info, { columns: fields.map((f) => ({ header: f, get: (x: Record<string, unknown>) => x[f] })) });
      if (failure) {
        const { reportError } = await import('../error-boundary.ts');
        process.exitCode = reportError(failure);
      }
    }),
  );
}
