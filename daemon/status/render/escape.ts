const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML content and quoted attribute values. */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

/** A percentage as the page shows it: two decimals, rounded down (99.999 is not 100.00), `—` without checks. */
export function pct(value: number | null): string {
  if (value === null) return '—';
  if (value >= 100) return '100 %';
  return `${(Math.floor(value * 100) / 100).toFixed(2)} %`;
}

/** `3 d 4 h`, `2 h 5 min`, `12 min`, `40 s`. */
export function duration(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  if (d > 0) return h ? `${d} d ${h} h` : `${d} d`;
  if (h > 0) return m ? `${h} h ${m} min` : `${h} h`;
  if (m > 0) return `${m} min`;
  return `${seconds} s`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `2026-11-03` to `Nov 3`. */
export function shortDate(isoDay: string): string {
  return `${MONTHS[Number(isoDay.slice(5, 7)) - 1]} ${Number(isoDay.slice(8, 10))}`;
}

/** The wire datetime `2026-11-03T09:30:00` as `2026-11-03 09:30`. */
export function when(wire: string): string {
  return `${wire.slice(0, 10)} ${wire.slice(11, 16)}`;
}

/**
 * Characters XML 1.0 does not allow, even escaped (C0 controls but tab and newlines, U+FFFE,
 * U+FFFF), as U+FFFD: one in a posted message or a badge's label would make a feed or an SVG
 * unreadable to strict parsers. Lone surrogates need nothing: UTF-8 encoding makes them U+FFFD.
 */
export function xmlChars(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '\ufffd');
}
