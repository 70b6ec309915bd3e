/** What the login page offers besides its notice (docs/API.md#single-sign-on). */
export interface LoginPageOptions {
  /** The single sign-on button: "Sign in with <name>", a link to `href` (GET /login/sso). */
  sso?: { name: string; href: string };
  /** The username/password form (`--password-login`). */
  passwordForm: boolean;
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
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>monctl — sign in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;max-width:22rem;margin:4rem auto;padding:0 1rem;color:#222}
label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.45rem;box-sizing:border-box}
button{margin-top:1.2rem;padding:.5rem 1.2rem}.error{color:#b00020}.info{color:#1b5e20}
</style></head>
<body><h1>monctl</h1>
${notice ? messages[notice] : ''}
${options.passwordForm ? passwordForm(csrf) : ''}
<p><a href="/api">API explorer</a></p>
</body></html>`;
}

function passwordForm(csrf: string): string {
  return `<form method="post" action="/login">
<label for="username">Username</label><input id="username" name="username" autocomplete="username" required autofocus>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<input type="hidden" name="_csrf" value="${csrf}">
<button type="submit">Sign in</button>
</form>`;
}
