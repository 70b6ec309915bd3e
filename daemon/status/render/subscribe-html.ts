import type { Summary } from '../summary.ts';

/** The subscribe form (email double opt-in), when the page takes sign-ups (the subscriptions work fills this in). */
export function subscribeHtml(_s: Summary): string {
  return '';
}
