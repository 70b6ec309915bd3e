/**
 * Gives the event loop a turn (timers, sockets) between two bounded pieces of work. SQLite answers
 * synchronously, so a loop of statements without it holds every check and request until it ends.
 */
export function yieldTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
