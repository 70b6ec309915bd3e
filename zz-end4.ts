import { createServer } from 'node:net';
let opened = 0;
const closing = createServer((s) => { opened++; const at = Date.now(); s.on('close', () => console.log('server socket closed after', Date.now() - at)); s.end(); });
await new Promise<void>((r) => closing.listen(0, '127.0.0.1', r));
const port = (closing.address() as { port: number }).port;
const { createGrpcProber } = await import('/work/i29-grpc/src/probes/grpc-probe.ts');
const { probeWebSocket } = await import('/work/i29-grpc/src/probes/websocket-probe.ts');
const ctx = { timeoutMs: 2000, conditions: null, report: false, skipTLS: true };
const type = process.argv[2];
if (type === 'grpc') {
  const p = createGrpcProber();
  console.log((await p.probe(`127.0.0.1:${port}`, { service: '', tls: process.argv[3] === 'tls' }, ctx)).message);
  await new Promise((r) => setTimeout(r, 500));
  console.log('opened', opened, 'open', await new Promise((res) => closing.getConnections((e, c) => res(c))));
  await p.close();
} else {
  console.log((await probeWebSocket(`ws://127.0.0.1:${port}/x`, { headers: {}, send: 'hello' }, ctx)).message);
}
await new Promise((r) => setTimeout(r, 500));
console.log('opened', opened, 'open', await new Promise((res) => closing.getConnections((e, c) => res(c))));
process.exit(0);
