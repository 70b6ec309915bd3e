import type { Summary } from '../summary.ts';

/** The header's logo and link (the branding work fills this in). */
export function brandingHeader(_s: Summary): string {
  return '';
}

/** CSS that applies the page's accent colour (appended to the page's stylesheet). */
export function brandingCss(_s: Summary): string {
  return '';
}
