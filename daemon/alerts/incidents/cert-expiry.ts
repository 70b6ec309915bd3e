const DAY_MS = 86_400_000;

/** What a resource remembers of its HTTPS peer certificate. */
export interface CertState {
  /** The certificate's notAfter, epoch ms. */
  expiresAt: number | null;
  /** The smallest threshold (days) already announced for this certificate. */
  alertedDays: number | null;
}

/**
 * One check saw a certificate valid until `notAfter`. A later notAfter is a
 * new certificate (renewed): what was announced is forgotten. Then the
 * smallest threshold that `notAfter` is within (days left <= threshold) fires
 * once, unless that threshold or a smaller one was already announced: when a
 * check finds several thresholds crossed at once, only the smallest fires.
 */
export function certStep(
  before: CertState,
  notAfter: number,
  at: number,
  thresholds: readonly number[],
): { state: CertState; fire: number | undefined } {
  const renewed = before.expiresAt === null || notAfter > before.expiresAt;
  const alerted = renewed ? null : before.alertedDays;
  const daysLeft = (notAfter - at) / DAY_MS;
  let smallest: number | undefined;
  for (const t of thresholds) if (daysLeft <= t && (smallest === undefined || t < smallest)) smallest = t;
  const fire = smallest !== undefined && (alerted === null || smallest < alerted) ? smallest : undefined;
  return { state: { expiresAt: notAfter, alertedDays: fire ?? alerted }, fire };
}
