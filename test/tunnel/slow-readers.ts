import { readFileSync } from 'node:fs';
import net from 'node:net';

/** Raw sockets that each send one request and never read the answer (slow readers at their slowest). */
export async function stuckReaders(url: string, request: string, count: number): Promise<{ sockets: net.Socket[]; close(): void }> {
  const { hostname, port } = new URL(url);
  const sockets: net.Socket[] = [];
  const connects: Array<Promise<void>> = [];
  for (let i = 0; i < count; i++) {
    const socket = net.connect(Number(port), hostname);
    socket.pause(); // nothing is ever read
    socket.on('error', () => {});
    sockets.push(socket);
    connects.push(new Promise((resolve) => socket.once('connect', () => { socket.write(request); resolve(); }).once('close', () => resolve())));
    if (i % 100 === 99) await Promise.all(connects.splice(0)); // not 1,000 SYNs at once: the listen backlog would drop some
  }
  await Promise.all(connects);
  return { sockets, close: () => sockets.forEach((s) => s.destroy()) };
}

/** Resident memory of a process, in MB (Linux /proc). */
export function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}
