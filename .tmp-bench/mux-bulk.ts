import net from 'node:net';
import http from 'node:http';
import { Writable } from 'node:stream';
import { MuxSession } from '../src/tunnel/mux/session.ts';
import { TunnelPool } from '../daemon/tunnel/forward.ts';
const role = process.argv[2];
const TOTAL = 1024 * 1024 * 1024;
const chunk = Buffer.alloc(1 << 20, 120);
if (role === 'agent') {
  // acceptor: every stream gets TOTAL bytes written (raw) or an HTTP response (http mode)
  const sock = net.connect(9301, '127.0.0.1', () => {
    const mux = new MuxSession(sock, { opener: false });
    mux.on('stream', (s) => {
      if (process.argv[3] === 'http') {
        s.once('data', () => {
          s.write(`HTTP/1.1 200 OK\r\ncontent-length: ${TOTAL}\r\n\r\n`);
          let left = TOTAL / chunk.length;
          const pump = () => { while (left-- > 0) { if (!s.write(chunk)) return void s.once('drain', pump); } };
          pump();
        });
      } else {
        let left = TOTAL / chunk.length;
        const pump = () => { while (left-- > 0) { if (!s.write(chunk)) return void s.once('drain', pump); } s.end(); };
        pump();
      }
    });
  });
} else {
  if (process.env.JUNK) (globalThis as any).junk = Array.from({ length: Number(process.env.JUNK) }, (_, i) => ({ i, s: 'x' + i, a: [i] }));
  net.createServer(async (sock) => {
    const mux = new MuxSession(sock, { opener: true });
    const t0 = process.cpuUsage(); const w0 = performance.now();
    let n = 0;
    await new Promise<void>((done) => {
      if (process.argv[3] === 'http') {
        const agent = new TunnelPool(mux, { host: 'x', port: 1 });
        http.get({ agent, host: 'x', path: '/' }, (res) => { res.on('data', (c: Buffer) => { n += c.length; }); res.on('end', done); });
      } else {
        const s = mux.open({ host: 'x', port: 1 });
        s.on('data', (c: Buffer) => { n += c.length; }); s.on('end', done);
      }
    });
    const cpu = process.cpuUsage(t0); const ms = performance.now() - w0;
    console.log(process.argv[3] ?? 'raw', `${(n / 1e6 / (ms / 1000)).toFixed(0)} MB/s; receiver CPU user ${(cpu.user / 1000 / (n / 1048576)).toFixed(2)} ms/MB sys ${(cpu.system / 1000 / (n / 1048576)).toFixed(2)} ms/MB`);
    process.exit(0);
  }).listen(9301, '127.0.0.1');
}
