import type { CheckOptionsByType } from '../../src/probes/types.ts';
import type { Column } from '../output/render.ts';

/**
 * How `resources get` shows a protocol check's own options (docs/API.md#check-types): a line per
 * option of the resource's type, in the words of its flags; the other types' lines are left out.
 * Admin reads carry the object with every field filled in, so each line says the default too.
 */
type O = CheckOptionsByType;
type WithOptions = { dns?: O['DNS']; ping?: O['PING']; tls?: O['TLS']; udp?: O['UDP'] } & {
  tcp?: O['TCP'];
  grpc?: O['GRPC'];
  websocket?: O['WEBSOCKET'];
};

const clip = (text: string) => (text.length > 60 ? `${text.slice(0, 57)}...` : text);
/** A payload as typed: `"PING\r\n"` (JSON-quoted, so control bytes show) or `hex 0a0b`. */
const payload = (send: string | null | undefined, encoding = 'text', none = 'nothing') =>
  send === null || send === undefined || send === '' ? none : encoding === 'hex' ? `hex ${clip(send)}` : clip(JSON.stringify(send));

const line = (header: string, get: (r: WithOptions) => unknown): Column<WithOptions> => ({ header, get, detail: true, omitUnset: true });

/** Typed by the probes' interfaces (what admin reads hold), not the schemas': `R` takes them as they are. */
export const checkOptionColumns: Column[] = [
  line('RECORD TYPE', (r) => r.dns?.recordType),
  line('RESOLVER', (r) => r.dns && (r.dns.resolver ?? "the system's")),
  line('TRANSPORT', (r) => r.dns?.transport),
  line('ECHOES', (r) => r.ping?.count),
  line('PING INTERVAL', (r) => r.ping && `${r.ping.intervalMs}ms`),
  line('IP FAMILY', (r) => r.ping?.family),
  line('STARTTLS', (r) => r.tls && (r.tls.starttls ?? 'none (TLS from the first byte)')),
  line('SNI', (r) => r.tls && (r.tls.sni ?? "the target's host")),
  line('MIN TLS', (r) => r.tls?.minVersion),
  line('SEND', (r) => {
    const o = r.udp ?? r.tcp ?? r.websocket;
    if (!o) return undefined;
    return payload(o.send, 'sendEncoding' in o ? o.sendEncoding : 'text', r.udp ? 'an empty datagram' : 'nothing');
  }),
  line('EXPECT', (r) => {
    if (!r.tcp) return undefined;
    const { expect, expectKind } = r.tcp;
    return expect === null ? 'nothing' : `${expectKind} ${expectKind === 'text' ? payload(expect) : clip(expect)}`;
  }),
  line('GRPC SERVICE', (r) => r.grpc && (r.grpc.service || 'the server as a whole')),
  line('GRPC TLS', (r) => r.grpc && (r.grpc.tls ? 'TLS' : 'plaintext')),
  line('WS HEADERS', (r) => {
    if (!r.websocket) return undefined;
    const headers = Object.entries(r.websocket.headers ?? {}).map(([k, v]) => `${k}: ${v}`);
    return headers.length ? headers : 'none';
  }),
];
