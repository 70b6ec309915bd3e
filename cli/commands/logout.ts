import type { Command } from 'commander';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { trustCaFile } from '../../src/tls/ca-file.ts';
import { CliClient } from '../api/client.ts';
import { ops } from '../api/ops.ts';
import { readConfig, writeConfig } from '../config/config-file.ts';
import { act } from '../runtime.ts';

export function register(program: Command): void {
  program
    .command('logout')
    .description('forget a context (the current one by default); revokes the key `login --username` created')
    .argument('[context]', 'context name')
    .action(
      act(async (rt, name: string | undefined) => {
        const config = readConfig();
        const target = name ?? rt.opts.context ?? config.current;
        const ctx = target ? config.contexts[target] : undefined;
        if (!target || !ctx)
          throw new MonctlError(
            'not-found',
            target ? `no context named "${target}"` : 'not logged in (no current context)',
            ExitCode.notFound,
          );
        if (ctx.managed && ctx.apiKey && ctx.keyId != null) {
          // The key was created for this login: revoke it rather than leave it usable.
          try {
            if (ctx.caFile) trustCaFile(ctx.caFile, `context ${target}: caFile`);
          } catch {
            // an unreadable CA file: the revoke fails below and says so, the context is still removed
          }
          await new CliClient({ server: ctx.server, credential: { kind: 'api-key', token: ctx.apiKey } })
            .call(ops.revokeApiKey, { params: { id: ctx.keyId } })
            .catch((err: Error) => rt.info(`warning: could not revoke key ${ctx.keyId}: ${err.message}`));
        }
        delete config.contexts[target];
        if (config.current === target) config.current = undefined;
        writeConfig(config);
        process.stdout.write(`Logged out of ${ctx.server} (context "${target}" removed).\n`);
      }),
    );
}
