import { ExitCode, MonctlError } from '../../src/errors.ts';
import { send } from '../api/transport.ts';

/** The session cookie and CSRF token of a form login (docs/API.md#sessions-and-csrf). */
export async function formLogin(server: string, username: string, password: string): Promise<{ cookie: string; csrf: string }> {
  const cookieOf = (setCookie: string | undefined) => /(?:^|,\s*)(JSESSIONID=[^;]+)/.exec(setCookie ?? '')?.[1];
  const page = await send('GET', `${server}/login`, { accept: 'text/html' });
  const csrf = /<input[^>]*name="_csrf"[^>]*value="([^"]+)"/.exec(page.text)?.[1];
  const preCookie = cookieOf(page.headers['set-cookie']);
  if (!csrf || !preCookie) throw new MonctlError('login', `${server}/login did not offer a login form`);
  const res = await send(
    'POST',
    `${server}/login`,
    {
      cookie: preCookie,
      'content-type': 'application/x-www-form-urlencoded',
    },
    new URLSearchParams({ username, password, _csrf: csrf }).toString(),
  );
  if (res.status === 429) throw new MonctlError('throttled', `too many failed logins for ${username}; try again later`, ExitCode.auth);
  const location = res.headers.location ?? '';
  const cookie = cookieOf(res.headers['set-cookie']);
  if (res.status !== 302 || location.includes('error') || !cookie)
    throw new MonctlError('login', 'login failed: wrong username or password', ExitCode.auth);
  return { cookie, csrf };
}
