import type { Summary } from '../summary.ts';

/** Posted incidents: open ones first, each with its timeline (the posted-incidents work fills this in). */
export function postedIncidentsHtml(_s: Summary): string {
  return '';
}
