import { hostname } from 'node:os';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { usage } from '../../src/errors.ts';
import { trustCaFile } from '../../src/tls/ca-file.ts';
import { CliClient } from '../api/client.ts';
import { ops } from '../api/ops.ts';
import { readConfig, writeConfig } from '../config/config-file.ts';
import { resolveConnection } from '../config/connection.ts';
import { readSecret } from '../io/prompt.ts';
import { act } from '../runtime.ts';
import { formLogin } from '../auth/form-login.ts';

export function register(program: Command): void {
  program
    .command('login')
    .description('log in to a daemon and save it as a context (API key from stdin or a prompt, --username, or --sso)')
    .option('--username <name>', 'log in with a username; the password is prompted or read from stdin, and an API key is created')
    .option('--sso', "log in through the daemon's single sign-on: a device code, or a browser sign-in; an API key is created")
    .option('--no-device', 'with --sso: sign in through a browser and a loopback port even if the provider offers device codes')
    .option('--name <context>', 'context name (default: host:port of the server)')
    .action(
      act(async (rt, opts: { username?: string; sso?: boolean; device: boolean; name?: string }) => {
        const conn = resolveConnection({ server: rt.opts.server, caFile: rt.opts.caFile }, { ...process.env, MONCTL_API_KEY: '' });
        const server = conn.server;
        // The CA is remembered in the context (absolute path), so later commands need not repeat --ca-file.
        const caFile = conn.caFile && resolve(conn.caFile);
        if (caFile) trustCaFile(caFile, conn.caFileSource);
        let apiKey: string;
        let keyId: number | null = null;
        let managed = false;
        if (opts.sso && opts.username) usage('--sso and --username are two ways to log in: choose one');
        if (!opts.device && !opts.sso) usage('--no-device goes with --sso');
        if (opts.sso) {
          const { ssoLogin } = await import('../auth/sso-login.ts');
          const login = await ssoLogin(new CliClient({ server }), server, { device: opts.device });
          [apiKey, keyId, managed] = [login.token, login.keyId, true];
        } else if (opts.username) {
          const password = await readSecret('Password');
          const session = await formLogin(server, opts.username, password);
          const viaSession = new CliClient({ server, credential: { kind: 'session', ...session } });
          const me = await viaSession.call(ops.me);
          const created = await viaSession.call(ops.createApiKey, {
            body: { name: `monctl ${opts.username}@${hostname()} ${new Date().toISOString().slice(0, 19)}`, role: me.role },
          });
          [apiKey, keyId, managed] = [created.token, created.id, true];
          await viaSession.raw('POST', '/logout', '', { 'content-type': 'application/x-www-form-urlencoded' }).catch(() => undefined);
        } else {
          apiKey = (await readSecret('API key')).trim();
        }
        const me = await new CliClient({ server, credential: { kind: 'api-key', token: apiKey } }).call(ops.me);
        const name = opts.name ?? new URL(server).host;
        const config = readConfig();
        config.contexts[name] = {
          server,
          apiKey,
          user: me.username,
          role: me.role,
          keyId: me.keyId ?? keyId,
          ...(managed ? { managed } : {}),
          ...(caFile ? { caFile } : {}),
        };
        config.current = name;
        writeConfig(config);
        process.stdout.write(`Logged in to ${server} as ${me.username} (${me.role}); context "${name}" is now current.\n`);
      }),
    );
}
