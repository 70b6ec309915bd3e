let applied = false;

/**
 * Makes V8 free the memory of the buffers a tunnel relays sooner. Each chunk
 * is a Buffer whose bytes live outside the JS heap; it dies young, but its
 * memory is freed only by the next young-generation GC. Those come as the JS
 * heap fills, which relaying barely does: at 600 MB/s, some 30 MB of dead
 * buffers piled up between two of them. V8 also runs one early once the young
 * generation holds 2 x its default maximum size of such memory: 128 MB on
 * 64-bit Node. This flag sets that default (read only at start-up otherwise:
 * the young generation itself stays as configured), so the early GC comes
 * every 2 x `mb` MB (docs/DECISIONS.md, "Agent memory"; the daemon relays
 * the same bytes, "Tunnel efficiency").
 *
 * The agent calls it with its first stream and the daemon with its first
 * agent, so a process that relays nothing does not load node:v8 (0.5 MB). The
 * flag exists from V8 13 (Node 24); older V8s would print an error for it.
 * Applies once per process.
 */
export function collectBuffersSooner(mb: number): void {
  if (applied) return;
  applied = true;
  if (Number(process.versions.v8.split('.')[0]) < 13) return;
  process.getBuiltinModule('node:v8').setFlagsFromString(`--scavenger-max-new-space-capacity-mb=${mb}`);
}
