import type { Command } from 'commander';
import { MonctlError } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import { configPath } from '../config/config-file.ts';
import { localKeyPath } from '../config/connection.ts';
import { act, withOutput } from '../runtime.ts';

export function register(program: Command): void {
  withOutput(program.command('info').description('which server, which credential, which config, and who you are'))
    .action(act(async (rt) => {
      const c = rt.conn;
      const info: Record<string, unknown> = {
        server: c.server, serverSource: c.serverSource, credential: c.credentialSource, context: c.context ?? null,
        configFile: configPath(), localKeyFile: localKeyPath(), caFile: c.caFile ?? null,
        user: null, role: null, via: null, error: null,
      };
      if (c.apiKey) {
        try {
          const me = await rt.client.call(ops.me);
          Object.assign(info, { user: me.username, role: me.role, via: me.via });
        } catch (err) {
          if (!(err instanceof MonctlError)) throw err;
          info.error = err.message;
          process.exitCode = err.exitCode;
        }
      }
      const fields = Object.keys(info);
      await rt.show(info, { columns: fields.map((f) => ({ header: f, get: (x: Record<string, unknown>) => x[f] })) });
    }));
}
