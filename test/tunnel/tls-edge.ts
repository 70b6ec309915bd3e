import type { IncomingHttpHeaders } from 'node:http';
import type { ClientHttp2Session } from 'node:http2';
import { request } from 'node:https';
import { connect } from 'node:tls';

/**
 * Clients of the HTTPS edge. Test hostnames resolve nowhere: every helper
 * connects to the edge's 127.0.0.1 address and sets SNI and Host itself.
 */
export interface TlsResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The serial number of the certificate the edge served. */
  serial: string;
  alpn: string | false | null;
}

/** One HTTP/1.1 request over TLS (a fresh connection), the chain verified against `ca`. */
export function tlsEdge(
  edgeTlsUrl: string,
  servername: string,
  path: string,
  ca: string | string[],
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<TlsResponse> {
  const url = new URL(edgeTlsUrl);
  return new Promise((resolve, reject) => {
    const options = {
      host: url.hostname,
      port: url.port,
      method,
      path,
      servername,
      ca,
      agent: false,
      ALPNProtocols: ['http/1.1'],
      headers: { host: servername, ...headers },
    };
    const req = request(options, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('error', reject);
      res.on('end', () => {
        const socket = res.socket as import('node:tls').TLSSocket;
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text,
          serial: socket.getPeerCertificate()?.serialNumber ?? '',
          alpn: socket.alpnProtocol,
        });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** The certificate the edge serves for `servername` (verified against `ca`), or the handshake error. */
export function servedFor(
  edgeTlsUrl: string,
  servername: string,
  ca: string | string[],
): Promise<{ serial: string; subjectaltname: string } | { error: string }> {
  const url = new URL(edgeTlsUrl);
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), servername, ca, ALPNProtocols: ['http/1.1'] }, () => {
      const peer = socket.getPeerCertificate();
      socket.destroy();
      resolve({ serial: peer.serialNumber, subjectaltname: peer.subjectaltname ?? '' });
    });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
  });
}

/** One HTTP/2 GET on an open session (with more request headers): its status and body as text. */
export function h2Request(
  session: ClientHttp2Session,
  path: string,
  authority: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path, ':authority': authority, ...headers });
    let body = '';
    let status = 0;
    stream.setEncoding('utf8');
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.on('data', (c: string) => (body += c));
    stream.on('end', () => resolve({ status, body }));
    stream.on('error', reject);
    stream.end();
  });
}
