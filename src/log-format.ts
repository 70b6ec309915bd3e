import type { DestinationStream } from 'pino';

/** How the daemon and the agent write their logs. */
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * Pretty on a terminal; JSON everywhere else (journald, pipes, the tests).
 * Asks fd 1 directly: touching `process.stdout` would create a stream the agent never uses.
 */
export function defaultLogFormat(isTTY: boolean = process.getBuiltinModule('node:tty').isatty(1)): LogFormat {
  return isTTY ? 'pretty' : 'json';
}

/**
 * The pino destination for a format: undefined (pino's own stdout) for JSON;
 * for pretty, pino-pretty as a synchronous stream in this thread. Not
 * `pino.transport`: a worker thread loads its module by path, which breaks once
 * the package is bundled. Loaded only when asked for, so JSON costs nothing.
 */
export async function logDestination(format: LogFormat): Promise<DestinationStream | undefined> {
  if (format !== 'pretty') return undefined;
  const { default: pretty } = await import('pino-pretty');
  return pretty({ sync: true, translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l', ignore: 'pid,hostname' });
}
