import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ResponseParser } from '../../daemon/tunnel/response-parser.ts';

interface Parsed {
  status?: number;
  headers?: string[];
  keepAlive?: boolean;
  body: string;
  ended: boolean;
  error?: string;
}

/** Feeds `wire` to a parser in the given pieces (cut points), then the end of the connection if asked. */
function parse(wire: string, opts: { method?: string; cuts?: number[]; eof?: boolean; maxHead?: number } = {}): Parsed {
  const out: Parsed = { body: '', ended: false };
  const parser = new ResponseParser(
    {
      head: (status, headers, keepAlive) => Object.assign(out, { status, headers, keepAlive }),
      body: (piece) => {
        out.body += piece.toString('latin1');
      },
      end: () => {
        out.ended = true;
      },
      error: (message) => {
        out.error ??= message;
      },
    },
    opts.maxHead ?? 16 * 1024,
  );
  parser.expect(opts.method ?? 'GET');
  const bytes = Buffer.from(wire, 'latin1');
  let at = 0;
  for (const cut of [...(opts.cuts ?? [])].sort((a, b) => a - b).concat(bytes.length)) {
    if (cut <= at) continue;
    parser.push(bytes.subarray(at, cut));
    at = cut;
  }
  if (opts.eof) parser.eof();
  return out;
}

const chunked =
  'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n5;ext=1\r\nhello\r\nB\r\n, world!!!!\r\n0\r\nTrailer-X: y\r\n\r\n';

describe('response parser', () => {
  it('reads Content-Length and chunked bodies whatever the chunk boundaries', () => {
    const length = 'HTTP/1.1 201 Created\r\nContent-Length: 12\r\nX-B:  two words \t\r\n\r\nhello, world';
    fc.assert(
      fc.property(fc.array(fc.nat(length.length), { maxLength: 6 }), fc.array(fc.nat(chunked.length), { maxLength: 6 }), (a, b) => {
        expect(parse(length, { cuts: a })).toEqual({
          status: 201,
          headers: ['Content-Length', '12', 'X-B', 'two words'],
          keepAlive: true,
          body: 'hello, world',
          ended: true,
        });
        expect(parse(chunked, { cuts: b })).toEqual({
          status: 200,
          headers: ['Transfer-Encoding', 'chunked', 'X-A', '1'],
          keepAlive: true,
          body: 'hello, world!!!!',
          ended: true,
        });
      }),
    );
  });

  it('knows which answers have no body, skips informational ones, and reads to the close without a length', () => {
    expect(parse('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n', { method: 'HEAD' })).toMatchObject({
      status: 200,
      body: '',
      ended: true,
      keepAlive: true,
    });
    expect(parse('HTTP/1.1 204 No Content\r\n\r\n')).toMatchObject({ status: 204, ended: true });
    expect(parse('HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n')).toMatchObject({ status: 304, ended: true });
    expect(parse('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')).toMatchObject({
      status: 200,
      body: 'ok',
      ended: true,
    });
    const toClose = parse('HTTP/1.1 200 OK\r\n\r\nstreamed until the end', { eof: true });
    expect(toClose).toMatchObject({ status: 200, body: 'streamed until the end', ended: true, keepAlive: false });
    expect(parse('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nzz', { eof: true })).toMatchObject({
      body: 'zz',
      ended: true,
      keepAlive: false,
    });
  });

  it('says whether the connection may be reused', () => {
    const ka = (wire: string) => parse(wire).keepAlive;
    expect(ka('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n')).toBe(true);
    expect(ka('HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n')).toBe(false);
    expect(ka('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n')).toBe(false);
    expect(ka('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n')).toBe(true);
    // Framed twice: the chunked framing wins, and the connection is not trusted again.
    expect(parse('HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n')).toMatchObject({
      body: 'x',
      ended: true,
      keepAlive: false,
    });
  });

  it('refuses what two parsers could read differently', () => {
    const refused = (wire: string, opts: { eof?: boolean; maxHead?: number } = {}) => parse(wire, opts).error;
    expect(refused('HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx')).toMatch(/conflicting/);
    expect(refused('HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\nx')).toMatch(/content-length/);
    expect(refused('HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\n\r\n')).toMatch(/header line/);
    expect(refused('HTTP/1.1 200 OK\r\nX-A : 1\r\n\r\n')).toMatch(/header line/);
    expect(refused('HTTP/1.1 200 OK\r\nX-A: 1\nX-B: 2\r\n\r\n')).toMatch(/invalid character/);
    expect(refused('HTTP/1.1 2000 OK\r\n\r\n')).toMatch(/status line/);
    expect(refused('HTTP/2 200\r\n\r\n')).toMatch(/status line/);
    expect(refused('HTTP/1.1 101 Switching Protocols\r\n\r\n')).toMatch(/101/);
    expect(refused('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n')).toMatch(/chunk size/);
    expect(refused('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy\r\n')).toMatch(/CRLF/);
    expect(refused('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxy')).toMatch(/after the end/);
    expect(refused(`HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(100)}`, { maxHead: 64 })).toMatch(/too large/);
    expect(refused('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabc', { eof: true })).toMatch(/closed before/);
  });
});
