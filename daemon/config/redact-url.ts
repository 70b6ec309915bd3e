/** What --print-config and messages show instead of a secret; refused as a value so a printed config cannot set it by accident. */
export const MASK = '********';

/**
 * Query parameters that carry a credential: libpq's and node-postgres's
 * `password` and `sslpassword` (the passphrase of `sslkey`), and the usual
 * names of passwords, tokens and keys in other URLs. Matched on the whole name.
 */
const SECRET_PARAM =
  /^(password|passwd|pass|pwd|sslpassword|sslpassphrase|passphrase|secret|client_secret|token|access_token|api[-_]?key|auth)$/i;

/** `scheme://userinfo@`: the userinfo runs to the last `@` before the path, as URL parsers read it. */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^/?#\s]*)@/gi;
/** `?name=value` and `&name=value` (and `;`, which some drivers accept). */
const PARAM = /([?&;])([^=&#;\s]+)=([^&#;\s]*)/g;

function decoded(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}

/**
 * `text` with every credential a URL in it can hold replaced by the mask: the
 * password of the userinfo (the user name stays), and the values of
 * credential query parameters (their names stay, so the reader sees what was
 * set). Textual, so that a value too broken to parse as a URL is redacted
 * all the same, and everything else is left as written. The one redaction of
 * URLs in the daemon: --print-config and the messages about refused values
 * use it.
 */
export function redactUrl(text: string): string {
  return text
    .replace(USERINFO, (_all, scheme: string, userinfo: string) => {
      const colon = userinfo.indexOf(':');
      return colon < 0 ? `${scheme}${userinfo}@` : `${scheme}${userinfo.slice(0, colon)}:${MASK}@`;
    })
    .replace(PARAM, (all, sep: string, name: string) => (SECRET_PARAM.test(decoded(name)) ? `${sep}${name}=${MASK}` : all));
}
