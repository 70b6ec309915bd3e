/**
 * What the ping side tells the deadline side of the push capability: a check's `late_at` was
 * written (a ping, a creation, a schedule edit), so its deadline is now `lateAt` (null: none,
 * it was judged late and waits for a ping). Pings at other pods arrive as the bus's
 * `push.pinged`, after which the judge re-reads `late_at` itself.
 */
export interface DeadlineBoard {
  moved(resourceId: number, lateAt: number | null): void;
}
