import { escapeHtml } from '../util/escape-html.ts';

/** What the login page offers besides its notice (docs/API.md#single-sign-on). */
export interface LoginPageOptions {
  /** The single sign-on button: "Sign in with <name>", a link to `href` (GET /login/sso). */
  sso?: { name: string; href: string };
  /** The username/password form (`--password-login`). */
  passwordForm: boolean;
  /** Why a single sign-on was refused (the page then answers with the refusal's status). */
  refusal?: string;
}

/** The login form. Plain HTML, no scripts, so it works with a strict CSP. */
export function loginPage(
  csrf: string,
  notice: 'error' | 'logout' | 'throttled' | undefined,
  options: LoginPageOptions = { passwordForm: true },
): string {
  const messages = {
    error: '<p class="error" role="alert">Invalid username or password.</p>',
    logout: '<p class="info" role="status">You have been logged out.</p>',
    throttled: '<p class="error" role="alert">Too many failed attempts. Wait a little and try again.</p>',
  };
  const refusal = options.refusal
    ? `<p class="error" role="alert" id="sso-refusal">Single sign-on failed: ${escapeHtml(options.refusal)}</p>`
    : '';
  const either = options.sso && options.passwordForm ? '<p class="or">or</p>' : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>monctl — sign in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;max-width:22rem;margin:4rem auto;padding:0 1rem;color:#222}
label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.45rem;box-sizing:border-box}
button{margin-top:1.2rem;padding:.5rem 1.2rem}.error{color:#b00020}.info{color:#1b5e20}
.sso{display:block;text-align:center;margin-top:1.2rem;padding:.55rem 1.2rem;border:1px solid #555;border-radius:3px;color:#222;text-decoration:none}
.sso:hover{background:#f3f3f3}.or{text-align:center;color:#666;margin:1.2rem 0 0}
</style></head>
<body><h1>monctl</h1>
${notice ? messages[notice] : ''}${refusal}
${options.sso ? ssoButton(options.sso) : ''}${either}
${options.passwordForm ? passwordForm(csrf) : ''}
<p><a href="/api">API explorer</a></p>
</body></html>`;
}

/** A link, not a form: the page's CSP (form-action 'self') would block a form whose answer redirects to the provider. */
function ssoButton(sso: { name: string; href: string }): string {
  return `<a class="sso" id="sso" href="${escapeHtml(sso.href)}">Sign in with ${escapeHtml(sso.name)}</a>`;
}

function passwordForm(csrf: string): string {
  return `<form method="post" action="/login">
<label for="username">Username</label><input id="username" name="username" autocomplete="username" required autofocus>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<input type="hidden" name="_csrf" value="${csrf}">
<button type="submit">Sign in</button>
</form>`;
}
