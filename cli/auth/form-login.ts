import { ExitCode, MonctlError } from '../../src/errors.ts';
import { send, type WireResponse } from '../api/transport.ts';
import { readSecret } from '../io/prompt.ts';
import { printQr } from './terminal-qr.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const SECOND_STEP = '/login/2fa';

/** One cookie's `name=value` from a (comma-joined) Set-Cookie header. */
const cookieOf = (setCookie: string | undefined, name: string) => new RegExp(`(?:^|,\\s*)(${name}=[^;,]+)`).exec(setCookie ?? '')?.[1];

/**
 * The session cookie and CSRF token of a form login (docs/API.md#sessions-and-csrf), through the
 * second step when the user has one (docs/API.md#two-factor-login): the code is asked as
 * "Authentication code" (the line after the password on stdin), and an enrolment the daemon
 * requires is done here, with the QR code on the terminal.
 */
export async function formLogin(server: string, username: string, password: string): Promise<{ cookie: string; csrf: string }> {
  const page = await send('GET', `${server}/login`, { accept: 'text/html' });
  const csrf = /<input[^>]*name="_csrf"[^>]*value="([^"]+)"/.exec(page.text)?.[1];
  const preCookie = cookieOf(page.headers['set-cookie'], 'JSESSIONID');
  if (!csrf || !preCookie) {
    if (page.status === 200 && !/name="password"/.test(page.text)) throw passwordLoginOff();
    throw new MonctlError('login', `${server}/login did not offer a login form`);
  }
  const res = await send(
    'POST',
    `${server}/login`,
    { cookie: preCookie, ...FORM },
    new URLSearchParams({ username, password, _csrf: csrf }).toString(),
  );
  refused(res, username);
  const location = res.headers.location ?? '';
  if (res.status === 302 && location === SECOND_STEP) return secondStep(server, username, csrf, preCookie, res);
  const cookie = cookieOf(res.headers['set-cookie'], 'JSESSIONID');
  if (res.status !== 302 || location.includes('error') || !cookie)
    throw new MonctlError('login', 'login failed: wrong username or password', ExitCode.auth);
  return { cookie, csrf };
}

async function secondStep(
  server: string,
  username: string,
  csrf: string,
  preCookie: string,
  passwordStep: WireResponse,
): Promise<{ cookie: string; csrf: string }> {
  const pending = cookieOf(passwordStep.headers['set-cookie'], 'monctl_login_2fa');
  if (!pending) throw new MonctlError('login', `${server} asked for a second step without its cookie`);
  const cookies = `${preCookie}; ${pending}`;
  const page = await send('GET', `${server}${SECOND_STEP}`, { cookie: cookies, accept: 'text/html' });
  const secret = /<code>([A-Z2-7]+)<\/code>/.exec(page.text)?.[1];
  if (secret) {
    // Enrolment the daemon requires of this user: the same secret as the browser page shows.
    process.stderr.write(`${server} requires a second factor for ${username}. Add this to an authenticator app:\n`);
    await printQr(`otpauth://totp/monctl:${encodeURIComponent(username)}?secret=${secret}&issuer=monctl`);
    process.stderr.write(`Secret: ${secret}\n`);
  }
  const code = await readSecret('Authentication code');
  const res = await send(
    'POST',
    `${server}${SECOND_STEP}`,
    { cookie: cookies, ...FORM },
    new URLSearchParams({ code, _csrf: csrf }).toString(),
  );
  refused(res, username);
  const cookie = cookieOf(res.headers['set-cookie'], 'JSESSIONID');
  if (!cookie || (res.status === 302 && res.headers.location !== '/api'))
    throw new MonctlError('login', 'login failed: wrong or used authentication code', ExitCode.auth);
  if (secret) {
    const codes = [...res.text.matchAll(/<li>([a-z2-9-]+)<\/li>/g)].map((m) => m[1]);
    process.stderr.write(`Two-factor login is on. Recovery codes, shown this once (each works once in place of a code):\n`);
    process.stdout.write(`${codes.join('\n')}\n`);
  }
  return { cookie, csrf };
}

function refused(res: WireResponse, username: string): void {
  if (res.status === 429) throw new MonctlError('throttled', `too many failed attempts for ${username}; try again later`, ExitCode.auth);
  if (res.status === 403 && res.text.includes('password-login-off')) throw passwordLoginOff();
}

const passwordLoginOff = () =>
  new MonctlError('login', 'this daemon has password login turned off: log in with single sign-on (monctl login --sso)', ExitCode.auth);
