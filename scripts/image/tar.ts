import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

/** One entry's owner and mode as the image holds them, whoever owns the staged file. */
export interface Owner {
  uid: number;
  gid: number;
}

/**
 * A POSIX ustar archive of a staged directory, written here rather than by
 * `tar`: every entry's owner is chosen per path (root, or the image's user for
 * its data dir) without root privileges or tar's owner maps, names are sorted
 * and times fixed, so one tree gives the same bytes, hence the same digest.
 */
export function* tarEntries(root: string, mtime: number, ownerOf: (path: string) => Owner): Generator<Buffer> {
  const walk = function* (rel: string): Generator<Buffer> {
    for (const name of readdirSync(join(root, rel)).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      const stat = lstatSync(join(root, path));
      const { uid, gid } = ownerOf(path);
      const mode = stat.mode & 0o7777;
      if (stat.isDirectory()) {
        yield header(`${path}/`, { mode, uid, gid, size: 0, mtime, type: '5' });
        yield* walk(path);
      } else if (stat.isSymbolicLink()) {
        yield header(path, { mode, uid, gid, size: 0, mtime, type: '2', link: readlinkSync(join(root, path)) });
      } else if (stat.isFile()) {
        const data = readFileSync(join(root, path));
        yield header(path, { mode, uid, gid, size: data.length, mtime, type: '0' });
        yield data;
        if (data.length % 512) yield Buffer.alloc(512 - (data.length % 512));
      }
    }
  };
  yield* walk('');
  yield Buffer.alloc(1024);
}

interface Fields {
  mode: number;
  uid: number;
  gid: number;
  size: number;
  mtime: number;
  type: '0' | '2' | '5';
  link?: string;
}

/** A 512-byte ustar header; a name longer than 100 bytes is split at a slash into prefix and name. */
function header(path: string, f: Fields): Buffer {
  const block = Buffer.alloc(512);
  let name = path;
  let prefix = '';
  if (Buffer.byteLength(name) > 100) {
    const cut = path.lastIndexOf('/', path.length - 2);
    prefix = path.slice(0, cut);
    name = path.slice(cut + 1);
    if (cut < 0 || Buffer.byteLength(name) > 100 || Buffer.byteLength(prefix) > 155) {
      throw new Error(`tar: path too long for ustar: ${path}`);
    }
  }
  const put = (text: string, at: number, len: number) => block.write(text, at, len, 'utf8');
  const octal = (n: number, at: number, len: number) => put(`${n.toString(8).padStart(len - 1, '0')}\0`, at, len);
  put(name, 0, 100);
  octal(f.mode, 100, 8);
  octal(f.uid, 108, 8);
  octal(f.gid, 116, 8);
  octal(f.size, 124, 12);
  octal(f.mtime, 136, 12);
  put('        ', 148, 8);
  put(f.type, 156, 1);
  if (f.link) put(f.link, 157, 100);
  put('ustar\0', 257, 6);
  put('00', 263, 2);
  put(prefix, 345, 155);
  let sum = 0;
  for (const byte of block) sum += byte;
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
  return block;
}
