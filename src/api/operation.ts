import type { Static, TObject, TSchema } from '@sinclair/typebox';

/**
 * One API operation, declared once in src/api and used three ways: the daemon
 * binds a handler to it and validates with its schemas, the OpenAPI document is
 * generated from it, and the typed client calls it.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Who may call: anyone, any authenticated principal, or ADMIN only. */
export type Access = 'public' | 'authenticated' | 'admin';

export interface OperationDef {
  readonly id: string;
  readonly method: HttpMethod;
  /** OpenAPI-style template, `/api/resources/{id}`. */
  readonly path: string;
  readonly summary: string;
  readonly description?: string;
  readonly tag: string;
  readonly access: Access;
  readonly params?: TObject;
  readonly query?: TObject;
  readonly body?: TSchema;
  /** The body may be left out (no content type, no bytes): the handler gets `{}`, as if it were sent. */
  readonly bodyOptional?: boolean;
  /** Bytes the body may have when not the 1 MiB of every other body (413 past it). */
  readonly bodyLimit?: number;
  /** Absent for streams, which write their own response. */
  readonly response?: TSchema;
  /** Success status; 200 unless said otherwise. */
  readonly status?: number;
  /** `text/event-stream` instead of JSON. */
  readonly stream?: boolean;
  /** `text/plain` instead of JSON (the handler writes it). */
  readonly text?: boolean;
  /** Error statuses this operation documents besides the ones its access implies. */
  readonly errors?: readonly number[];
}

export function defineOperation<const O extends OperationDef>(op: O): O {
  return op;
}

type StaticOr<S, Fallback> = S extends TSchema ? Static<S> : Fallback;

export type ParamsOf<O extends OperationDef> = StaticOr<O['params'], undefined>;
export type QueryOf<O extends OperationDef> = StaticOr<O['query'], undefined>;
export type BodyOf<O extends OperationDef> = StaticOr<O['body'], undefined>;
/** What a client may send: an optional body may be left out. */
type ClientBodyOf<O extends OperationDef> = O['bodyOptional'] extends true ? BodyOf<O> | undefined : BodyOf<O>;
export type ResponseOf<O extends OperationDef> = StaticOr<O['response'], void>;

type Field<K extends string, T> = undefined extends T ? { [P in K]?: T } : { [P in K]: T };

/** What a client passes to call an operation: only the parts it declares. */
export type InputOf<O extends OperationDef> = Field<'params', ParamsOf<O>> &
  Field<'query', Partial<NonNullable<QueryOf<O>>> | undefined> &
  Field<'body', ClientBodyOf<O>>;

/** `/api/resources/{id}` with `{id: 3}` to `/api/resources/3`. */
export function fillPath(template: string, params: Record<string, unknown> | undefined): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params?.[name];
    if (value === undefined) throw new Error(`missing path parameter ${name}`);
    return encodeURIComponent(String(value));
  });
}
