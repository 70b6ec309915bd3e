/**
 * Go's readings of text, which Gatus applies to both sides of a comparison: integers as
 * `strconv.ParseInt(s, 0, 64)` (0x, 0o, 0b, a leading 0 for octal, `_` between digits), floats,
 * and durations as `time.ParseDuration` (48h, 1h30m, 300ms). Conditions must read `0x1` and `48h`
 * as Gatus does to behave the same.
 */

const INT = /^[+-]?(?:0[xX](_?[0-9a-fA-F])+|0[oO](_?[0-7])+|0[bB](_?[01])+|0(_?[0-7])*|[1-9](_?[0-9])*)$/;
const INT64_LIMIT = 2 ** 63;

/** `strconv.ParseInt(s, 0, 64)`, or null where Go returns an error. */
export function parseGoInt(text: string): number | null {
  if (text.length === 0 || text.length > 80 || !INT.test(text)) return null;
  const negative = text[0] === '-';
  const unsigned = (text[0] === '-' || text[0] === '+' ? text.slice(1) : text).replaceAll('_', '');
  let value: number;
  const prefix = unsigned.slice(0, 2).toLowerCase();
  if (prefix === '0x') value = Number.parseInt(unsigned.slice(2), 16);
  else if (prefix === '0o') value = Number.parseInt(unsigned.slice(2), 8);
  else if (prefix === '0b') value = Number.parseInt(unsigned.slice(2), 2);
  else if (unsigned.length > 1 && unsigned[0] === '0') value = Number.parseInt(unsigned.slice(1), 8);
  else value = Number.parseInt(unsigned, 10);
  if (value >= INT64_LIMIT && !(negative && value === INT64_LIMIT)) return null;
  return negative ? -value : value;
}

const FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** `strconv.ParseFloat(s, 64)` for decimal text, truncated as Gatus's `int64(f)`; null otherwise. */
export function parseGoFloatAsInt(text: string): number | null {
  if (text.length === 0 || text.length > 80 || !FLOAT.test(text)) return null;
  const value = Math.trunc(Number(text));
  return Number.isFinite(value) ? value : null;
}

const UNIT_NS: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, μs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
const COMPONENT = /(\d*)(?:\.(\d*))?([^\d.]+)/y;

/** `time.ParseDuration(s).Milliseconds()`, or null where Go returns an error. */
export function parseGoDuration(text: string): number | null {
  if (text.length === 0 || text.length > 80) return null;
  let i = 0;
  let negative = false;
  if (text[0] === '-' || text[0] === '+') {
    negative = text[0] === '-';
    i = 1;
  }
  if (text.slice(i) === '0') return 0;
  if (i >= text.length) return null;
  let ns = 0;
  while (i < text.length) {
    COMPONENT.lastIndex = i;
    const m = COMPONENT.exec(text);
    if (!m || (m[1] === '' && (m[2] ?? '') === '')) return null;
    const unit = UNIT_NS[m[3]];
    if (unit === undefined) return null;
    ns += Number(`${m[1] || '0'}.${m[2] || '0'}`) * unit;
    i = COMPONENT.lastIndex;
  }
  if (ns >= INT64_LIMIT) return null;
  const ms = Math.trunc(ns / 1e6);
  return negative && ms !== 0 ? -ms : ms;
}

/**
 * A duration as Gatus shows it: whole seconds in Go's form without trailing zero units
 * (`336h`, `1h30m`, `1h0m15s`, `0s`).
 */
export function formatGoDuration(ms: number): string {
  const seconds = Math.trunc(Math.abs(ms) / 1000);
  if (seconds === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${sign}${h}h${m > 0 || s > 0 ? `${m}m` : ''}${s > 0 ? `${s}s` : ''}`;
  if (m > 0) return `${sign}${m}m${s > 0 ? `${s}s` : ''}`;
  return `${sign}${s}s`;
}
