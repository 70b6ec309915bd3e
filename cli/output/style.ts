/**
 * Colour on a TTY only, and never with NO_COLOR or --no-color: a handful of
 * ANSI codes, no colour library to load.
 */
const codes = { red: 31, green: 32, yellow: 33, blue: 34, gray: 90, bold: 1, cyan: 36 } as const;
export type Colour = keyof typeof codes;

export function colourEnabled(flag: boolean | undefined, stream: NodeJS.WriteStream = process.stdout): boolean {
  if (flag === false) return false;
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return false;
  return Boolean(stream.isTTY);
}

export function paint(on: boolean, colour: Colour, text: string): string {
  return on ? `\u001b[${codes[colour]}m${text}\u001b[0m` : text;
}

/** Colour for a status word (resource status, agent status, check status). */
export function statusColour(status: unknown): Colour | undefined {
  const s = String(status).toLowerCase();
  if (s === 'available' || s === 'connected' || s === 'up') return 'green';
  if (s === 'not_available' || s === 'disconnected' || s === 'down') return 'red';
  if (s === 'unknown' || s === 'pending') return 'yellow';
  if (s === 'inactive') return 'gray';
  return undefined;
}
