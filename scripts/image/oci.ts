import { createHash } from 'node:crypto';
import { createWriteStream, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { type Owner, tarEntries } from './tar.ts';

/** The part of an OCI image config (plus Docker's Healthcheck) that the build sets. */
export interface ImageConfig {
  User: string;
  Env: string[];
  Entrypoint: string[];
  Cmd: string[];
  WorkingDir: string;
  ExposedPorts: Record<string, object>;
  Volumes: Record<string, object>;
  Labels: Record<string, string>;
  StopSignal: string;
  /** Docker's field, kept by docker-format loaders; OCI runtimes ignore it (the README gives the command). */
  Healthcheck?: { Test: string[]; Interval: number; Timeout: number; StartPeriod: number; Retries: number };
}

export interface BuiltImage {
  /** Digest of the manifest: the image's identity. */
  digest: string;
  compressedBytes: number;
  uncompressedBytes: number;
}

/** A hashing pass-through that also counts bytes. */
function tap() {
  const hash = createHash('sha256');
  let bytes = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  let digest: string | undefined;
  return { stream, result: () => ({ digest: (digest ??= `sha256:${hash.digest('hex')}`), bytes }) };
}

/**
 * Writes an OCI image layout (oci-layout, index.json, blobs/sha256/…) holding
 * one image: `rootfs` as a single gzip layer, and `config`. No daemon and no
 * privilege: any OCI tool (umoci, skopeo, podman `oci:` / `oci-archive:`) reads it.
 */
export async function writeOciImage(opts: {
  rootfs: string;
  out: string;
  tag: string;
  created: Date;
  config: ImageConfig;
  ownerOf: (path: string) => Owner;
}): Promise<BuiltImage> {
  const blobs = join(opts.out, 'blobs/sha256');
  rmSync(opts.out, { recursive: true, force: true });
  mkdirSync(blobs, { recursive: true });
  const mtime = Math.floor(opts.created.getTime() / 1000);

  const raw = tap();
  const packed = tap();
  const pending = join(opts.out, 'layer.tmp');
  await pipeline(
    Readable.from(tarEntries(opts.rootfs, mtime, opts.ownerOf)),
    raw.stream,
    createGzip(),
    packed.stream,
    createWriteStream(pending),
  );
  const layer = packed.result();
  const diff = raw.result();
  renameSync(pending, join(blobs, layer.digest.slice(7)));

  const blob = (value: object) => {
    const bytes = Buffer.from(JSON.stringify(value));
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    writeFileSync(join(blobs, digest.slice(7)), bytes);
    return { digest, size: bytes.length };
  };
  const created = opts.created.toISOString();
  const config = blob({
    created,
    architecture: 'amd64',
    os: 'linux',
    config: opts.config,
    rootfs: { type: 'layers', diff_ids: [diff.digest] },
    history: [{ created, created_by: 'scripts/build-image.ts' }],
  });
  const manifest = blob({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
    layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: layer.digest, size: layer.bytes }],
    annotations: { ...opts.config.Labels },
  });
  writeFileSync(join(opts.out, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  writeFileSync(
    join(opts.out, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.index.v1+json',
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          ...manifest,
          annotations: { 'org.opencontainers.image.ref.name': opts.tag },
        },
      ],
    }),
  );
  return { digest: manifest.digest, compressedBytes: statSync(join(blobs, layer.digest.slice(7))).size, uncompressedBytes: diff.bytes };
}
