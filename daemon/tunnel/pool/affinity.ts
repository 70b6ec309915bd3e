/**
 * Client-IP affinity by rendezvous hashing: each agent in the rotation scores the client's IP, the
 * highest wins. A client keeps its agent while that agent stays in the rotation, and when one
 * leaves only its own clients move; nothing is remembered per client (no table to grow).
 */

/** FNV-1a of the client's IP, computed once per choice. */
export function ipHash(ip: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < ip.length; i++) h = Math.imul(h ^ ip.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The agent's score for a client (murmur3's finaliser over both: well spread for close ids and IPs). */
export function affinityScore(ipHashed: number, agentId: number): number {
  let h = ipHashed ^ Math.imul(agentId, 0x9e3779b1);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
