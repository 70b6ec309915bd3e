import { deflateSync } from 'node:zlib';

/** CRC-32 of PNG chunks (the one of zlib, bit by bit: a few bytes in tests). */
function crc32(bytes: Buffer): number {
  let c = ~0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return ~c >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * A real PNG of `width`×`height` in one RGB colour; `padding` bytes of an
 * ancillary chunk make it as large as a test needs (decoders skip it).
 */
export function png(width: number, height: number, rgb: [number, number, number] = [9, 105, 218], padding = 0): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, no interlace
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())]);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    ...(padding ? [chunk('teXt', Buffer.alloc(padding, 0x61))] : []),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * An SVG logo that tries to run script three ways (a script element, an
 * onload handler, a javascript: link), to reach outside (an external image,
 * a foreignObject with HTML) and still draws a blue square. Each attempt
 * would mark the document and raise an alert.
 */
export const EVIL_SVG = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="120" height="48" viewBox="0 0 120 48"
  onload="document.documentElement.setAttribute('data-pwned','onload');alert('pwned onload')">
  <script type="text/javascript">document.documentElement.setAttribute('data-pwned','script');alert('pwned script')</script>
  <title>Acme</title>
  <rect id="box" width="120" height="48" fill="#0969da"/>
  <a xlink:href="javascript:document.documentElement.setAttribute('data-pwned','link');alert('pwned link')"><rect id="hit" width="120" height="48" fill-opacity="0"/></a>
  <image href="http://127.0.0.1:9/pwned-image.png" width="10" height="10"/>
  <foreignObject width="10" height="10"><div xmlns="http://www.w3.org/1999/xhtml"><img src="x" onerror="alert('pwned html')"/></div></foreignObject>
</svg>`;
