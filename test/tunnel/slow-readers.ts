import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
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
    connects.push(
      new Promise((resolve) =>
        socket
          .once('connect', () => {
            socket.write(request);
            resolve();
          })
          .once('close', () => resolve()),
      ),
    );
    if (i % 100 === 99) await Promise.all(connects.splice(0)); // not 1,000 SYNs at once: the listen backlog would drop some
  }
  await Promise.all(connects);
  return { sockets, close: () => sockets.forEach((s) => s.destroy()) };
}

/** Bytes a process has read through syscalls (/proc/<pid>/io): the daemon's reads are mostly the tunnel's. */
export function readBytes(pid: number): number {
  return Number(/rchar:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1]);
}

/** Resident memory of a process, in MB (Linux /proc). */
export function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

/**
 * A target in a process of its own that answers every request with `bytes` bytes, as a real
 * service would: its writes of 1,000 large answers must not slow the test's own clients.
 * `served()` says how many answers it has started.
 */
export async function startBulkTarget(bytes: number): Promise<{ url: string; served(): Promise<number>; close(): void }> {
  const script = `const body = Buffer.alloc(${bytes}, 'x'); let served = 0;
    const server = require('node:http').createServer((req, res) => req.url === '/count' ? res.end(String(served)) : (served++, res.end(body)));
    server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
    process.stdin.on('end', () => process.exit(0)).resume();`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (c: Buffer) => resolve(Number(String(c).trim())));
    child.once('exit', (code) => reject(new Error(`the bulk target exited with ${code}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    served: async () => Number(await (await fetch(`${url}/count`)).text()),
    close: () => {
      child.stdin!.end();
      child.kill();
    },
  };
}
