import { isIP } from 'node:net';
import { MAX_PAYLOAD_BYTES, type OptionField } from '../../src/api/schemas/check-options.ts';
import { invalidField } from '../../src/errors.ts';
import type { CheckOptions, CheckOptionsByType } from '../../src/probes/types.ts';
import { checkHostPort, isHostname } from './targets.ts';

/**
 * 400 naming the field (`tcp.expect`) for option values the schema lets through but no check could
 * use (docs/API.md#check-types). `options` is the whole object, defaults filled in, so that a PATCH
 * is checked merged (a new `expectKind: regex` against the stored `expect`). Messages never quote a
 * value: a header or a payload may hold a token.
 */
export function checkOptionValues(field: OptionField, options: CheckOptions | undefined): void {
  if (!options) return;
  const o = options as unknown as Record<string, unknown>;
  switch (field) {
    case 'dns': {
      const { resolver } = o as unknown as CheckOptionsByType['DNS'];
      const reason = resolver === null ? undefined : checkHostPort(resolver, false);
      if (reason) throw invalidField('dns.resolver', `must be host:port or host (port 53): ${reason}`);
      return;
    }
    case 'tls': {
      const { sni } = o as unknown as CheckOptionsByType['TLS'];
      // RFC 6066: the server name is a DNS host name, never an address.
      if (sni !== null && (isIP(sni) || !isHostname(sni))) throw invalidField('tls.sni', 'must be a DNS host name (not an IP address)');
      return;
    }
    case 'udp':
    case 'tcp': {
      const { send, sendEncoding } = o as unknown as CheckOptionsByType['UDP' | 'TCP'];
      if (send !== null) checkPayload(`${field}.send`, send, sendEncoding);
      if (field === 'tcp') checkExpect(o as unknown as CheckOptionsByType['TCP']);
      return;
    }
    case 'websocket': {
      const { headers, send } = o as unknown as CheckOptionsByType['WEBSOCKET'];
      checkWebSocketHeaders(headers);
      if (send !== null) checkPayload('websocket.send', send, 'text');
      return;
    }
  }
}

const HEX = /^(?:[0-9A-Fa-f]{2})*$/;

/** Even-length hex, or text; at most MAX_PAYLOAD_BYTES once decoded (UTF-8 for text). */
function checkPayload(field: string, value: string, encoding: 'text' | 'hex'): void {
  if (encoding === 'hex' && !HEX.test(value)) throw invalidField(field, 'hex must be pairs of hex digits (0-9, a-f), without spaces');
  const bytes = encoding === 'hex' ? value.length / 2 : Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_PAYLOAD_BYTES) throw invalidField(field, `at most ${MAX_PAYLOAD_BYTES} bytes once decoded (${bytes} given)`);
}

/**
 * `expect` as its kind reads it: hex pairs, or a regex that compiles. A regex runs on at most the
 * first 4 KiB read, and is at most MAX_EXPECT_LENGTH characters, which bounds what backtracking
 * can cost (docs/DECISIONS.md, "Check types: the API side").
 */
function checkExpect({ expect, expectKind }: CheckOptionsByType['TCP']): void {
  if (expect === null) return;
  if (expectKind === 'hex') {
    if (!HEX.test(expect)) throw invalidField('tcp.expect', 'hex must be pairs of hex digits (0-9, a-f), without spaces');
  } else if (expectKind === 'regex') {
    try {
      new RegExp(expect);
    } catch (err) {
      // V8 quotes the pattern (`Invalid regular expression: /(/: Unterminated group`): keep the reason only.
      throw invalidField('tcp.expect', `not a regular expression: ${(err as Error).message.split(': ').pop()}`);
    }
  }
}

/** RFC 9110 token: what a header name may be. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Set by the WebSocket client from the URL and the handshake itself: a resource setting them would break the upgrade. */
const CLIENT_HEADERS = new Set(['host', 'upgrade', 'connection', 'content-length', 'transfer-encoding']);

function checkWebSocketHeaders(headers: Record<string, string>): void {
  const seen = new Set<string>();
  for (const name of Object.keys(headers)) {
    if (!TOKEN.test(name))
      throw invalidField('websocket.headers', "a header name must be an HTTP token (letters, digits and !#$%&'*+-.^_`|~)");
    const lower = name.toLowerCase();
    if (CLIENT_HEADERS.has(lower) || lower.startsWith('sec-websocket-'))
      throw invalidField('websocket.headers', `${name} is set by the WebSocket client itself`);
    if (seen.has(lower)) throw invalidField('websocket.headers', `${name} is given twice (header names are case-insensitive)`);
    seen.add(lower);
  }
}
