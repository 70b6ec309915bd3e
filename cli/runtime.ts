import type { Command } from 'commander';
import { ExitCode, MonctlError } from '../src/errors.ts';
import { trustCaFile } from '../src/tls/ca-file.ts';
import { CliClient } from './api/client.ts';
import { type Connection, resolveConnection } from './config/connection.ts';
import { checkFormat, formatList, type View, render } from './output/render.ts';
import { colourEnabled } from './output/style.ts';

/**
 * What every command action gets: the resolved connection (lazily, so that
 * `context list` works with a broken config), a client, and output helpers.
 */
export interface GlobalOptions {
  server?: string;
  context?: string;
  caFile?: string;
  color?: boolean;
  output?: string;
  yes?: boolean;
}

export class Runtime {
  readonly opts: GlobalOptions;
  readonly colour: boolean;
  readonly tty: boolean;
  #conn: Connection | undefined;
  #client: CliClient | undefined;

  constructor(opts: GlobalOptions) {
    // Before any request: `resources add … -o xml` must not create the resource and then fail.
    if (opts.output !== undefined) checkFormat(opts.output);
    this.opts = opts;
    this.colour = colourEnabled(opts.color);
    this.tty = Boolean(process.stdout.isTTY);
  }

  get conn(): Connection {
    return (this.#conn ??= resolveConnection({ server: this.opts.server, context: this.opts.context, caFile: this.opts.caFile }));
  }

  /** The client of the connection; its CA file (if any) joins the process's roots first, for every TLS client of this run. */
  get client(): CliClient {
    if (this.#client) return this.#client;
    const { server, apiKey, caFile, caFileSource } = this.conn;
    if (caFile) trustCaFile(caFile, caFileSource);
    return (this.#client = new CliClient({ server, credential: apiKey ? { kind: 'api-key', token: apiKey } : { kind: 'none' } }));
  }

  get isAdmin(): boolean {
    return this.conn.role === 'ADMIN';
  }

  get format(): string {
    return this.opts.output ?? 'table';
  }

  /** True when the user asked for machine output (json/yaml): mutations then print the object. */
  get structured(): boolean {
    return this.format !== 'table' && this.format !== 'wide';
  }

  async show(data: unknown, view?: View, format = this.format): Promise<void> {
    process.stdout.write(await render(data, view, format, { colour: this.colour, tty: this.tty }));
  }

  /** A mutation's result: the object in json/yaml, else a one-line message. */
  async done(data: unknown, message: string): Promise<void> {
    if (this.structured) await this.show(data);
    else process.stdout.write(`${message}\n`);
  }

  info(message: string): void {
    process.stderr.write(`${message}\n`);
  }
}

/** Wraps an action: builds the Runtime from the command's own and inherited options. */
export function act<A extends unknown[]>(fn: (rt: Runtime, ...args: A) => Promise<void>) {
  return async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const rt = new Runtime(command.optsWithGlobals() as GlobalOptions);
    await fn(rt, ...(args.slice(0, -1) as A));
  };
}

/** `-o` on a read command. */
export function withOutput(cmd: Command): Command {
  return cmd.option('-o, --output <format>', formatList());
}

/** An id, or a name resolved through the list (exit 3 when nothing matches). */
export async function resolveRef<T extends { id: number }>(
  ref: string,
  noun: string,
  list: () => Promise<T[]>,
  name: (x: T) => string,
): Promise<number> {
  if (/^\d+$/.test(ref)) return Number(ref);
  const found = (await list()).filter((x) => name(x) === ref);
  if (found.length === 0) throw new MonctlError('not-found', `no ${noun} named "${ref}"`, ExitCode.notFound);
  if (found.length > 1) throw new MonctlError('ambiguous', `several ${noun}s are named "${ref}": use the id`, ExitCode.error);
  return found[0].id;
}
