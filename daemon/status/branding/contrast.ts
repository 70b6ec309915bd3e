import { invalidField } from '../../../src/errors.ts';

/** WCAG 2 relative luminance of `#rrggbb`. */
export function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** WCAG 2 contrast ratio of two `#rrggbb` colours, 1 to 21. */
export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * Where the page puts the accent colour, with what it must stand out from
 * (the colours of daemon/status/render/page-css.ts). No colour can be link
 * text on both the light (#ffffff) and the dark (#0d1117) background: 4.5:1
 * against white needs a luminance of at most 0.183, against #0d1117 at least
 * 0.198. So links take it in the light scheme only; in both schemes it fills
 * the header link under white text and draws the header's rule, which on the
 * dark page are non-text contrast (WCAG 1.4.11, 3:1). docs/DECISIONS.md
 * "Status page branding" has the figures.
 */
export const ACCENT_PAIRS = [
  { against: '#ffffff', min: 4.5, where: 'links on the light background, and the white text of the header link' },
  { against: '#f6f8fa', min: 4.5, where: 'links on light cards (announcements)' },
  { against: '#0d1117', min: 3, where: 'the header link and rule on the dark background' },
] as const;

/** The colour as stored (lower case), or a 400 naming `accentColor` with the pair that fails and its ratio. */
export function checkAccent(colour: string): string {
  const hex = colour.toLowerCase();
  for (const pair of ACCENT_PAIRS) {
    const ratio = contrast(hex, pair.against);
    if (ratio < pair.min) {
      throw invalidField(
        'accentColor',
        `${hex} has a contrast ratio of ${ratio.toFixed(2)}:1 against ${pair.against} (${pair.where}); WCAG AA needs ${pair.min}:1`,
      );
    }
  }
  return hex;
}
