import type { CheckTiming } from '../../src/probes/types.ts';

/** The phases of `monctl_resource_last_check_phase_seconds`, in their CheckTiming fields. */
export const PHASE_LABELS = [
  ['dns', 'dnsMs'],
  ['connect', 'connectMs'],
  ['tls', 'tlsMs'],
  ['first_byte', 'firstByteMs'],
  ['total', 'totalMs'],
] as const;

const STATUS_NAME = 'monctl_resource_status';
const STATUS_HELP =
  'Result of the last check of a resource at a location: 1 available, 0 not available, -1 unknown (or the location could not check)';
const DURATION_NAME = 'monctl_resource_last_check_duration_seconds';
const PHASE_NAME = 'monctl_resource_last_check_phase_seconds';
const PHASE_HELP =
  'Phases of the last check of a resource at a location (--metrics-detail all only); a phase that did not happen is absent';

/** Samples per chunk of the rendered text. */
const CHUNK = 2048;

const header = (name: string, help: string) => `# HELP ${name} ${help}\n# TYPE ${name} gauge\n`;

const STATUS = 0;
const DURATION = 1;
const FIRST_PHASE = 2;

/** prom-client's escaping of a label value. */
const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

/**
 * The per-resource gauges (`monctl_resource_status`, `monctl_resource_last_check_duration_seconds`
 * and, with `--metrics-detail all`, `monctl_resource_last_check_phase_seconds`), one slot per
 * resource and location in typed arrays, rendered as exposition text at scrape time. prom-client
 * kept a label object, a hashed key and a value object per series: about 1.3 KB per resource,
 * and a hash of the labels at every check. A slot here is 11 bytes plus 8 per value (NaN: unset).
 */
export class ResourceGauges {
  readonly #stride: number;
  /** Slot of the daemon's own check of a resource; an agent location's, under `id:location`. */
  readonly #byId = new Map<number, number>();
  readonly #byLocation = new Map<string, number>();
  readonly #names: string[] = [];
  readonly #types: string[] = [];
  #ids = new Float64Array(1024).fill(Number.NaN);
  #location = new Uint16Array(1024);
  #type = new Uint8Array(1024);
  #values: Float64Array;
  #used = 0;
  readonly #free: number[] = [];

  /** `phases`: also the last phases of each check (`--metrics-detail all`). */
  constructor(phases: boolean) {
    this.#stride = phases ? FIRST_PHASE + PHASE_LABELS.length : FIRST_PHASE;
    this.#values = new Float64Array(1024 * this.#stride).fill(Number.NaN);
  }

  /** The latest check of `id` at `location`: its status value, and (when it ran) its duration and phases. */
  set(id: number, type: string, location: string, status: number, seconds?: number, timing?: CheckTiming): void {
    const slot = this.#slot(id, type, location);
    const at = slot * this.#stride;
    this.#values[at + STATUS] = status;
    if (seconds === undefined) return;
    this.#values[at + DURATION] = seconds;
    if (this.#stride === FIRST_PHASE || !timing) return;
    PHASE_LABELS.forEach(([, key], i) => {
      const ms = timing[key];
      // A phase this check did not have is not current: its last value goes.
      this.#values[at + FIRST_PHASE + i] = ms === null || !Number.isFinite(ms) ? Number.NaN : Math.max(0, ms) / 1000;
    });
  }

  /** Drops the series of `id` at these locations (a deleted resource, a location it no longer has). */
  forget(id: number, locations: readonly string[]): void {
    for (const location of locations) {
      const key = `${id}:${location}`;
      const slot = location === 'daemon' ? this.#byId.get(id) : this.#byLocation.get(key);
      if (slot === undefined) continue;
      if (location === 'daemon') this.#byId.delete(id);
      else this.#byLocation.delete(key);
      this.#ids[slot] = Number.NaN;
      this.#values.fill(Number.NaN, slot * this.#stride, (slot + 1) * this.#stride);
      this.#free.push(slot);
    }
  }

  /**
   * The gauges in exposition format, in chunks of at most CHUNK samples (HELP and TYPE even
   * without samples, as prom-client wrote them): at a million resources the text is hundreds of
   * MB, written a chunk at a time so that neither the heap nor the scheduler waits on one string.
   */
  *render(): Generator<string> {
    yield header(STATUS_NAME, STATUS_HELP);
    yield* this.#samples(STATUS_NAME, STATUS);
    yield header(DURATION_NAME, 'Duration of the last check of a resource at a location');
    yield* this.#samples(DURATION_NAME, DURATION);
    if (this.#stride === FIRST_PHASE) return;
    yield header(PHASE_NAME, PHASE_HELP);
    for (const [i, [phase]] of PHASE_LABELS.entries()) yield* this.#samples(PHASE_NAME, FIRST_PHASE + i, `,phase="${phase}"`);
  }

  *#samples(name: string, value: number, label = ''): Generator<string> {
    let lines: string[] = [];
    for (let slot = 0; slot < this.#used; slot++) {
      const v = this.#values[slot * this.#stride + value];
      if (Number.isNaN(this.#ids[slot]) || Number.isNaN(v)) continue;
      const labels = `resource_id="${this.#ids[slot]}",type="${this.#types[this.#type[slot]]}",location="${escapeLabel(this.#names[this.#location[slot]])}"`;
      lines.push(`${name}{${labels}${label}} ${v}\n`);
      if (lines.length < CHUNK) continue;
      yield lines.join('');
      lines = [];
    }
    if (lines.length) yield lines.join('');
  }

  #slot(id: number, type: string, location: string): number {
    const daemon = location === 'daemon';
    const key = daemon ? '' : `${id}:${location}`;
    let slot = daemon ? this.#byId.get(id) : this.#byLocation.get(key);
    if (slot === undefined) {
      slot = this.#free.pop() ?? this.#used++;
      if (slot >= this.#ids.length) this.#grow();
      if (daemon) this.#byId.set(id, slot);
      else this.#byLocation.set(key, slot);
      this.#ids[slot] = id;
      this.#location[slot] = indexOf(this.#names, location);
    }
    this.#type[slot] = indexOf(this.#types, type);
    return slot;
  }

  #grow(): void {
    const size = this.#ids.length * 2;
    const ids = new Float64Array(size).fill(Number.NaN);
    ids.set(this.#ids);
    const location = new Uint16Array(size);
    location.set(this.#location);
    const type = new Uint8Array(size);
    type.set(this.#type);
    const values = new Float64Array(size * this.#stride).fill(Number.NaN);
    values.set(this.#values);
    [this.#ids, this.#location, this.#type, this.#values] = [ids, location, type, values];
  }
}

/** The index of `name` in a small table of names (types, locations), added when new. */
function indexOf(table: string[], name: string): number {
  const i = table.indexOf(name);
  return i >= 0 ? i : table.push(name) - 1;
}
