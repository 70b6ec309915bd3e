import pino from 'pino';

export type Logger = pino.Logger;

/**
 * Structured JSON logs on stdout. Secrets never reach a log line: headers that
 * carry credentials are redacted wherever a request is logged.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['password', '*.password', 'token', '*.token', 'headers.authorization', 'headers["x-api-key"]', 'headers.cookie'],
      censor: '[redacted]',
    },
  });
}
