import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { problemFrom } from '../../src/client/api-client.ts';
import { ExitCode, HttpError, MonctlError } from '../../src/errors.ts';
import type { CliClient } from '../api/client.ts';
import { ops } from '../api/ops.ts';
import { baseHeaders, send } from '../api/transport.ts';
import { openBrowser } from '../io/open-browser.ts';

/** The API key a single sign-on ends with. */
export interface SsoLogin {
  token: string;
  keyId: number;
}

/** How long the loopback sign-in waits for the browser: as long as the daemon keeps the sign-in open. */
const LOOPBACK_WAIT_MS = 10 * 60_000;

const say = (line: string) => process.stderr.write(`${line}\n`);

/** This machine's name as the daemon accepts it in the key's name. */
const hostOf = () =>
  hostname()
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .slice(0, 64) || 'cli';

function noSso(err: unknown, server: string): never {
  if (err instanceof HttpError && err.code === 'sso-off')
    throw new MonctlError(
      'sso-off',
      `${server} has no single sign-on (--oidc-issuer): log in with --username, or pipe an API key`,
      ExitCode.auth,
    );
  throw err;
}

/**
 * `monctl login --sso` (docs/API.md#cli-single-sign-on): the device
 * authorization grant when the provider offers it (and `device` is not
 * false), else a browser sign-in that ends on a loopback port of this
 * process. The daemon holds the client secret and does every exchange; the
 * CLI only carries codes and ends with an API key of the signed-in user.
 */
export async function ssoLogin(client: CliClient, server: string, opts: { device: boolean }): Promise<SsoLogin> {
  if (opts.device) {
    try {
      return await deviceLogin(client, await client.call(ops.startSsoDevice));
    } catch (err) {
      if (!(err instanceof HttpError && err.code === 'sso-no-device-grant')) noSso(err, server);
      say('The provider offers no device sign-in: signing in through a browser instead.');
    }
  }
  return loopbackLogin(client, server);
}

async function deviceLogin(
  client: CliClient,
  device: {
    userCode: string;
    verificationUri: string;
    verificationUriComplete: string | null;
    expiresIn: number;
    interval: number;
    handle: string;
  },
): Promise<SsoLogin> {
  say(`To sign in, open ${device.verificationUri} and enter the code ${device.userCode}`);
  if (device.verificationUriComplete) say(`  or open ${device.verificationUriComplete}`);
  say(`Waiting for the sign-in (the code expires in ${Math.ceil(device.expiresIn / 60)} min)...`);
  openBrowser(device.verificationUriComplete ?? device.verificationUri);
  const deadline = Date.now() + device.expiresIn * 1000;
  let interval = device.interval;
  const host = hostOf();
  while (Date.now() < deadline) {
    await sleep(interval * 1000);
    const answer = await client.call(ops.pollSsoDevice, { body: { handle: device.handle, host } });
    if (answer.status === 'complete' && answer.token && answer.keyId != null) return { token: answer.token, keyId: answer.keyId };
    if (answer.status === 'slow_down') interval += 5;
  }
  throw new MonctlError('sso-timeout', 'the sign-in was not approved in time: run monctl login --sso again', ExitCode.auth);
}

const page = (text: string) =>
  `<!doctype html><meta charset="utf-8"><title>monctl</title><p style="font:16px system-ui;margin:3em">${text}</p>`;

/** Waits for the browser's redirect to `http://127.0.0.1:<port>/callback?code=&state=`; answers it a page to close. */
function waitForCode(srv: Server, state: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new MonctlError('sso-timeout', 'no sign-in came back within 10 minutes: run monctl login --sso again', ExitCode.auth)),
      LOOPBACK_WAIT_MS,
    );
    srv.on('request', (req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const headers = { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', connection: 'close' };
      const code = url.searchParams.get('code');
      if (url.pathname !== '/callback' || url.searchParams.get('state') !== state || !code) {
        res.writeHead(400, headers).end(page('This is not the sign-in monctl is waiting for.'));
        return;
      }
      res.writeHead(200, headers).end(page('Signed in to monctl. You can close this tab and go back to the terminal.'));
      clearTimeout(timer);
      resolve(code);
    });
  });
}

async function loopbackLogin(client: CliClient, server: string): Promise<SsoLogin> {
  const state = randomBytes(24).toString('base64url');
  const srv = createServer();
  await new Promise<void>((resolve, reject) => srv.once('error', reject).listen(0, '127.0.0.1', resolve));
  try {
    const start = `${server}/login/sso/cli?port=${(srv.address() as AddressInfo).port}&state=${state}`;
    // The daemon refuses here what the browser would show as an error page (no SSO, a bad port).
    const probe = await send('GET', start, baseHeaders());
    if (probe.status !== 302) noSso(problemFrom(probe.status, probe.headers['content-type'], probe.text), server);
    say('To sign in, open this URL in a browser:');
    say(`  ${start}`);
    say('Waiting for the sign-in (up to 10 min)...');
    openBrowser(start);
    const code = await waitForCode(srv, state);
    const login = await client.call(ops.redeemSsoHandoff, { body: { code, host: hostOf() } });
    return { token: login.token, keyId: login.keyId };
  } finally {
    srv.close();
    srv.closeIdleConnections();
  }
}
