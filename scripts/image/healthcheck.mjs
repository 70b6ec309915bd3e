// The image's health check (`node /opt/monctl/healthcheck.mjs`): the image has no
// shell and no curl, so Node asks the daemon's /actuator/health on loopback and
// exits 0 only on {"status":"UP"}. The port is MONCTL_LISTEN's (default 8080).
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';

const listen = process.env.MONCTL_LISTEN || '0.0.0.0:8080';
const port = Number(listen.slice(listen.lastIndexOf(':') + 1)) || 8080;
const get = process.env.MONCTL_TLS_CERT ? httpsGet : httpGet;
const req = get({ host: '127.0.0.1', port, path: '/actuator/health', timeout: 4000, rejectUnauthorized: false }, (res) => {
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (chunk) => {
    body += chunk;
  });
  res.on('end', () => {
    const up = res.statusCode === 200 && /"status"\s*:\s*"UP"/.test(body);
    process.stdout.write(`${res.statusCode} ${body.slice(0, 200)}\n`);
    process.exit(up ? 0 : 1);
  });
});
req.on('timeout', () => req.destroy(new Error('timed out')));
req.on('error', (err) => {
  process.stdout.write(`unhealthy: ${err.message}\n`);
  process.exit(1);
});
