/**
 * The pages of the second login step, plain HTML without scripts like /login (the QR code is
 * inline SVG: part of the page, so the login CSP's `default-src 'none'` lets it draw).
 */
function shell(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>monctl — ${title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;max-width:24rem;margin:4rem auto;padding:0 1rem;color:#222}
label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.45rem;box-sizing:border-box}
button{margin-top:1.2rem;padding:.5rem 1.2rem}.error{color:#b00020}.qr svg{width:14rem;height:14rem}
code{font-size:1.05rem;word-break:break-all}ol{font-family:monospace;font-size:1.05rem}
</style></head>
<body><h1>monctl</h1>
${body}
</body></html>`;
}

const wrongCode = '<p class="error" role="alert">That code is not valid. Try the current one.</p>';

function codeForm(csrf: string, label: string): string {
  return `<form method="post" action="/login/2fa">
<label for="code">${label}</label><input id="code" name="code" autocomplete="one-time-code" required autofocus maxlength="64">
<input type="hidden" name="_csrf" value="${csrf}">
<button type="submit">Continue</button>
</form>`;
}

/** Asks the code of the authenticator app, or a recovery code. */
export function codePage(csrf: string, error: boolean): string {
  return shell(
    'authentication code',
    `${error ? wrongCode : ''}
<p>Enter the 6-digit code of your authenticator app, or one of your recovery codes.</p>
${codeForm(csrf, 'Authentication code')}
<p><a href="/login">Start again</a></p>`,
  );
}

/** Enrolment at login, where the daemon requires a second factor: the QR code, the secret as text and the code field. */
export function enrolPage(csrf: string, secret: string, qrSvg: string, error: boolean): string {
  return shell(
    'set up two-factor login',
    `${error ? wrongCode : ''}
<p>This daemon requires a second factor for your account. Scan the code with an authenticator app, then enter the code it shows.</p>
<div class="qr">${qrSvg}</div>
<p>Or type the secret: <code>${secret}</code></p>
${codeForm(csrf, 'Authentication code')}`,
  );
}

/** The recovery codes, shown once after enrolment; the session exists already. */
export function recoveryCodesPage(codes: readonly string[]): string {
  return shell(
    'recovery codes',
    `<p>Two-factor login is on. Keep these recovery codes somewhere safe: each works once in place of a code, and they are not shown again.</p>
<ol>${codes.map((c) => `<li>${c}</li>`).join('')}</ol>
<p><a href="/api">Continue</a></p>`,
  );
}
