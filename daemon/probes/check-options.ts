/**
 * The protocol checks' own options (docs/API.md#check-types) as stored in `resources.check_options`
 * (migration 0022) and as a probe gets them: the type's object with every field, defaults filled
 * in. Read by the scheduler and the API alike, so that a check of a body
 * (`POST /admin/api/resources/test`) and of the saved resource get the same object.
 */
import type { OptionField } from '../../src/api/schemas/check-options.ts';
import type { CheckOptions, CheckOptionsByType } from '../../src/probes/types.ts';

export type OptionedType = keyof CheckOptionsByType;

/** Each type's defaults, in the order reads show the fields (stored JSON keeps it, so equal options compare as equal text). */
export const OPTION_DEFAULTS: { readonly [T in OptionedType]: Readonly<CheckOptionsByType[T]> } = {
  DNS: { recordType: 'A', resolver: null, transport: 'udp' },
  PING: { count: 3, intervalMs: 200, family: 'auto' },
  TLS: { starttls: null, sni: null, minVersion: 'TLSv1.2' },
  UDP: { send: '', sendEncoding: 'text' },
  TCP: { send: null, sendEncoding: 'text', expect: null, expectKind: 'text' },
  GRPC: { service: '', tls: false },
  WEBSOCKET: { headers: {}, send: null },
};

/** The API field of a type's options (`dns` for DNS), or undefined for a type that has none (HTTP, DOCKER, PUSH, SSH). */
export function optionFieldOf(type: string): OptionField | undefined {
  return Object.hasOwn(OPTION_DEFAULTS, type) ? (type.toLowerCase() as OptionField) : undefined;
}

/** The options given (create, a test body, stored JSON, or a PATCH merged over the stored ones) partial; null: none. */
export type GivenOptions = Readonly<Record<string, unknown>> | null | undefined;

/**
 * The type's options with every field, defaults where `given` leaves one out or sets it to null
 * (a PATCH's null goes back to the default); undefined for a type without options. Only the
 * type's own fields are kept: stored JSON from another version reads as what this one knows.
 */
export function normaliseOptions<T extends OptionedType>(type: T, given: GivenOptions): CheckOptionsByType[T];
export function normaliseOptions(type: string, given: GivenOptions): CheckOptions | undefined;
export function normaliseOptions(type: string, given: GivenOptions): CheckOptions | undefined {
  if (!Object.hasOwn(OPTION_DEFAULTS, type)) return undefined;
  const defaults = OPTION_DEFAULTS[type as OptionedType] as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, fallback] of Object.entries(defaults)) {
    const value = given?.[key];
    out[key] = value === undefined || value === null ? (key === 'headers' ? {} : fallback) : value;
  }
  return out as unknown as CheckOptions;
}

/** A TCP check without `send` or `expect` is the seed's connect check: it has no options to store or send. */
function isPlain(type: string, options: CheckOptions | undefined): boolean {
  if (options === undefined) return true;
  if (type !== 'TCP') return false;
  const tcp = options as CheckOptionsByType['TCP'];
  return tcp.send === null && tcp.expect === null;
}

/** The column's value: the options as JSON, NULL for a type without options and for a plain TCP connect. */
export function optionsColumn(type: string, given: GivenOptions): string | null {
  const options = normaliseOptions(type, given);
  return isPlain(type, options) ? null : JSON.stringify(options);
}

/** The stored object (partial or NULL when none), for PATCH to merge over; a column that is not an object reads as none. */
export function storedOptions(column: string | null): Record<string, unknown> | null {
  if (!column) return null;
  try {
    const value: unknown = JSON.parse(column);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** What the admin views show: the type's own object, every field (`{dns: {...}}`); `{}` for a type without options. */
export function optionsView(type: string, column: string | null): Partial<Record<OptionField, Record<string, unknown>>> {
  const field = optionFieldOf(type);
  const options = normaliseOptions(type, storedOptions(column));
  return field && options ? { [field]: options as unknown as Record<string, unknown> } : {};
}

/** ProbeInput.options: the type's object from the column, or undefined for a type without options and a plain TCP connect. */
export function probeOptionsOf(type: string, given: GivenOptions): CheckOptions | undefined {
  const options = normaliseOptions(type, given);
  return isPlain(type, options) ? undefined : options;
}
