import { covers } from './names.ts';

/** What choosing among certificates for one name needs to know of each. */
export interface Candidate {
  id: number;
  source: 'UPLOAD' | 'ACME';
  hostnames: readonly string[];
  notBefore: number;
  notAfter: number;
}

/**
 * The certificate to serve for a name among those covering it: one within its
 * validity first, then an uploaded one over ACME's (an upload is the admin's
 * explicit choice), then the one valid longest; an exact name and a wildcard
 * weigh the same.
 */
export function bestFor<C extends Candidate>(name: string, candidates: Iterable<C>, now = Date.now()): C | undefined {
  let best: C | undefined;
  let bestScore: [number, number, number] = [-1, -1, -1];
  for (const c of candidates) {
    if (!c.hostnames.some((h) => covers(h, name))) continue;
    const score: [number, number, number] = [c.notBefore <= now && now < c.notAfter ? 1 : 0, c.source === 'UPLOAD' ? 1 : 0, c.notAfter];
    if (
      score[0] > bestScore[0] ||
      (score[0] === bestScore[0] && (score[1] > bestScore[1] || (score[1] === bestScore[1] && score[2] > bestScore[2])))
    ) {
      best = c;
      bestScore = score;
    }
  }
  return best;
}
