/**
 * One error model for both processes. Every error carries a stable `code`
 * (for scripts and tests), the HTTP status it maps to on the daemon side, and
 * the exit code it maps to on the CLI side (docs/API.md#errors).
 */

export interface FieldError {
  field: string;
  message: string;
}

/** RFC 9457 problem details, as the daemon sends them and the client reads them. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

/**
 * Every exit code of `monctl`, the daemon's commands and the agent, by name:
 * code says `process.exit(ExitCode.usage)`, never a bare number (README, The
 * CLI, lists them for users; scripts depend on the numbers, so they never change).
 */
export const ExitCode = {
  ok: 0,
  /** Anything else that went wrong: a 4xx/5xx other than below, no connection, a damaged database. */
  error: 1,
  /** A bad command line, flag value, input file or configuration. */
  usage: 2,
  /** What was named does not exist (HTTP 404, no such context, no database file). */
  notFound: 3,
  /** Not authenticated or not allowed (HTTP 401/403, a refused login or agent token). */
  auth: 4,
  /** A check, or `resources add --wait`, ended NOT_AVAILABLE. */
  notAvailable: 5,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

const titles: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  507: 'Insufficient Storage',
};

export function statusTitle(status: number): string {
  return titles[status] ?? 'Error';
}

export function exitCodeForStatus(status: number): ExitCode {
  if (status === 404) return ExitCode.notFound;
  if (status === 401 || status === 403) return ExitCode.auth;
  return ExitCode.error;
}

export class MonctlError extends Error {
  readonly code: string;
  readonly exitCode: ExitCode;
  constructor(code: string, message: string, exitCode: ExitCode = ExitCode.error, options?: ErrorOptions) {
    super(message, options);
    this.name = 'MonctlError';
    this.code = code;
    this.exitCode = exitCode;
  }
}

/** A CLI usage error: the message, and exit code 2, before any request is made. */
export function usage(message: string): never {
  throw new MonctlError('usage', message, ExitCode.usage);
}

/**
 * An error with an HTTP status. Thrown by daemon handlers and rendered as
 * problem+json by the single error boundary; also what the API client throws
 * when the daemon answers with a problem.
 */
export class HttpError extends MonctlError {
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;
  readonly extensions: Record<string, unknown>;
  constructor(
    status: number,
    code: string,
    detail: string,
    opts: { errors?: FieldError[]; headers?: Record<string, string>; extensions?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(code, detail, exitCodeForStatus(status), { cause: opts.cause });
    this.name = 'HttpError';
    this.status = status;
    this.errors = opts.errors;
    this.headers = opts.headers ?? {};
    this.extensions = opts.extensions ?? {};
  }

  toProblem(instance?: string): Problem {
    const problem: Problem = {
      type: `urn:monctl:problem:${this.code}`,
      title: statusTitle(this.status),
      status: this.status,
      detail: this.message,
      ...this.extensions,
    };
    if (instance !== undefined) problem.instance = instance;
    if (this.errors) problem.errors = this.errors;
    return problem;
  }

  static fromProblem(problem: Problem): HttpError {
    const code = typeof problem.type === 'string' ? problem.type.replace(/^urn:monctl:problem:/, '') : 'http-error';
    return new HttpError(problem.status, code, problem.detail ?? problem.title, { errors: problem.errors });
  }
}

export const badRequest = (detail: string, errors?: FieldError[]) => new HttpError(400, 'validation', detail, { errors });
export const invalidField = (field: string, message: string) =>
  new HttpError(400, 'validation', `Invalid value for ${field}: ${message}`, { errors: [{ field, message }] });
/** The default names both ways in: the browser login and an API key (the explorer links /login on a 401). */
export const unauthorized = (detail = 'Authentication is required: log in at /login, or send an API key as Authorization: Bearer <key>') =>
  new HttpError(401, 'unauthorized', detail, { headers: { 'WWW-Authenticate': 'Bearer' } });
export const forbidden = (detail = 'Not allowed') => new HttpError(403, 'forbidden', detail);
export const notFound = (detail = 'Not found') => new HttpError(404, 'not-found', detail);
export const conflict = (detail: string, field?: string) =>
  new HttpError(409, 'conflict', detail, field ? { errors: [{ field, message: detail }] } : {});
