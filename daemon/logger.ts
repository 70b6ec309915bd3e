import pino from 'pino';

export type Logger = pino.Logger;

/**
 * Structured JSON logs on stdout, or through `destination` (pino-pretty for
 * `--log-format pretty`, src/log-format.ts). Secrets never reach a log line:
 * headers that carry credentials are redacted wherever a request is logged.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['password', '*.password', 'token', '*.token', 'headers.authorization', 'headers["x-api-key"]', 'headers.cookie'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
