import { Type } from '@sinclair/typebox';

const Phase = (description: string) => Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description });

/**
 * The phases of one check, in ms (src/probes/types.ts CheckTiming). null: the phase did not
 * happen on that check (a pooled connection has no DNS, connect or TLS; plain HTTP no TLS; TCP no
 * first byte).
 */
export const CheckTiming = Type.Object(
  {
    dnsMs: Phase('resolving the name'),
    connectMs: Phase('the TCP connect'),
    tlsMs: Phase('the TLS handshake'),
    firstByteMs: Phase("from sending the request to the response's first byte"),
    totalMs: Type.Number({ minimum: 0, description: 'the whole check' }),
  },
  { title: 'CheckTiming' },
);
