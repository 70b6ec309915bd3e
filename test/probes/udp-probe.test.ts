import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProbeRunner } from '../../src/probes/runner.ts';
import type { ProbeInput, UdpOptions } from '../../src/probes/types.ts';

const runner = createProbeRunner({ timeoutMs: 3_000, credential: async () => undefined });
let echo: Socket;
let silent: Socket;
/** Datagrams the echo server received, as it got them. */
const received: Buffer[] = [];

async function bound(onMessage?: (socket: Socket, msg: Buffer, rinfo: { port: number; address: string }) => void): Promise<Socket> {
  const socket = createSocket('udp4');
  if (onMessage) socket.on('message', (msg, rinfo) => onMessage(socket, msg, rinfo));
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  return socket;
}

beforeAll(async () => {
  echo = await bound((socket, msg, rinfo) => {
    received.push(msg);
    socket.send(Buffer.concat([Buffer.from('echo:'), msg]), rinfo.port, rinfo.address);
  });
  silent = await bound();
});
afterAll(async () => {
  echo.close();
  silent.close();
  await runner.close();
});

function check(port: number, options: Partial<UdpOptions>, extra: Partial<ProbeInput> = {}) {
  const udp: UdpOptions = { send: 'ping', sendEncoding: 'text', ...options };
  return runner.probe({
    resourceId: 1,
    type: 'UDP',
    target: `127.0.0.1:${port}`,
    skipTLS: false,
    recursive: false,
    options: udp,
    ...extra,
  });
}

describe('UDP checks', () => {
  it('an echo server answers: AVAILABLE, [BODY] is the answer as text', async () => {
    const result = await check(
      echo.address().port,
      {},
      { conditions: ['[BODY] == echo:ping', '[CONNECTED] == true', '[IP] == 127.0.0.1'] },
    );
    expect(result).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    expect(received.at(-1)?.toString()).toBe('ping');
  });

  it('a hex payload goes out as those bytes', async () => {
    const result = await check(echo.address().port, { send: '00ff0a', sendEncoding: 'hex' });
    expect(result).toMatchObject({ status: 'AVAILABLE', errorCode: null });
    expect(received.at(-1)).toEqual(Buffer.from([0, 255, 10]));
  });

  it('a condition on [BODY] that does not hold is CONDITION_FAILED', async () => {
    const result = await check(echo.address().port, {}, { conditions: ['[BODY] == pong'] });
    expect(result).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONDITION_FAILED', message: '[BODY] (echo:ping) == pong' });
  });

  it('a silent port is NO_RESPONSE once the timeout passes, saying UDP is connectionless', async () => {
    const result = await check(silent.address().port, {}, { timeoutMs: 300 });
    expect(result).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'NO_RESPONSE' });
    expect(result.message).toContain('connectionless');
  });

  it('a closed port (ICMP port unreachable) is CONNECTION_ERROR, before the timeout', async () => {
    const gone = await bound();
    const port = gone.address().port;
    await new Promise<void>((r) => gone.close(r));
    const result = await check(port, {}, { timeoutMs: 60_000 });
    expect(result).toMatchObject({ status: 'NOT_AVAILABLE', errorCode: 'CONNECTION_ERROR' });
    expect(result.message).toContain('ECONNREFUSED');
  });
});
