import { type FSWatcher, watch } from 'node:fs';
import type { Server as HttpsServer } from 'node:https';
import { basename, dirname, resolve } from 'node:path';
import type { Logger } from '../logger.ts';
import { describeCertificate, loadTlsPair, type TlsFiles, type TlsPair } from './tls.ts';
import type { TlsProfile } from '../config/values.ts';
import { tlsProfileOptions } from './tls-profile.ts';

/** Quiet time after the last file event before the pair is read. */
const DEBOUNCE_MS = 250;
/** A pair that does not check out after a file event is read again this often, this many times. */
const SETTLE_RETRY_MS = 500;
const SETTLE_TRIES = 4;

/**
 * Swaps the API listener's certificate without a restart: on SIGHUP, and when
 * either file changes on disk. `setSecureContext` applies to new handshakes
 * only, so open connections (SSE streams, agent tunnels) stay up on the old one.
 * A pair that fails its checks is never installed: the previous one keeps serving.
 */
export class TlsReloader {
  readonly #server: HttpsServer;
  readonly #files: TlsFiles;
  readonly #log: Logger;
  readonly #profile: TlsProfile | undefined;
  #current: TlsPair;
  #watchers: FSWatcher[] = [];
  #timer: NodeJS.Timeout | undefined;
  #tries = 0;

  constructor(server: HttpsServer, files: TlsFiles, current: TlsPair, log: Logger, profile?: TlsProfile) {
    this.#server = server;
    this.#profile = profile;
    this.#files = files;
    this.#current = current;
    this.#log = log;
  }

  /** Reads both files now and installs them if they check out (SIGHUP: even when unchanged). */
  reload(trigger: string): boolean {
    try {
      this.#install(loadTlsPair(this.#files), trigger);
      return true;
    } catch (err) {
      this.#log.error(
        { trigger, error: (err as Error).message, ...describeCertificate(this.#current.leaf) },
        'TLS reload failed; still serving the previous certificate',
      );
      return false;
    }
  }

  /**
   * Watches the directories, not the files: certificate tools (certbot, a
   * Kubernetes secret volume) replace files by renaming over them or by
   * swapping a symlink, which a watch on the old file would never see.
   */
  watch(): void {
    const names = new Map<string, Set<string>>();
    for (const file of [this.#files.certFile, this.#files.keyFile]) {
      const dir = dirname(resolve(file));
      names.set(dir, (names.get(dir) ?? new Set()).add(basename(file)));
    }
    for (const [dir, files] of names) {
      try {
        const watcher = watch(dir, { persistent: false }, (_event, name) => {
          // No name (some platforms), one of ours, or a Kubernetes `..data` swap.
          if (!name || files.has(String(name)) || String(name).startsWith('..')) this.#changed();
        });
        watcher.on('error', (err) => this.#log.warn({ dir, error: err.message }, 'TLS files: watch failed; reload with SIGHUP'));
        this.#watchers.push(watcher);
      } catch (err) {
        this.#log.warn({ dir, error: (err as Error).message }, 'TLS files: cannot watch; reload with SIGHUP');
      }
    }
  }

  close(): void {
    clearTimeout(this.#timer);
    for (const watcher of this.#watchers) watcher.close();
    this.#watchers = [];
  }

  #changed(): void {
    this.#tries = 0;
    this.#schedule(DEBOUNCE_MS);
  }

  #schedule(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#check(), ms);
    this.#timer.unref();
  }

  /**
   * After a file event: the cert and the key are rarely written at the same
   * instant, so a pair that does not check out yet is read again a few times
   * before the failure is logged.
   */
  #check(): void {
    let pair: TlsPair;
    try {
      pair = loadTlsPair(this.#files);
    } catch (err) {
      if (++this.#tries < SETTLE_TRIES) return this.#schedule(SETTLE_RETRY_MS);
      this.#log.error(
        { trigger: 'file change', error: (err as Error).message, ...describeCertificate(this.#current.leaf) },
        'TLS reload failed; still serving the previous certificate',
      );
      return;
    }
    if (pair.cert.equals(this.#current.cert) && pair.key.equals(this.#current.key)) return;
    this.#install(pair, 'file change');
  }

  #install(pair: TlsPair, trigger: string): void {
    // setSecureContext builds the context from these options alone: without the profile the
    // server would fall back to node's default ciphers (CBC, plain RSA) after the first reload.
    this.#server.setSecureContext({ ...tlsProfileOptions(this.#profile), cert: pair.cert, key: pair.key });
    this.#current = pair;
    const details = describeCertificate(pair.leaf);
    if (Date.parse(pair.leaf.validTo) < Date.now()) this.#log.warn({ trigger, ...details }, 'TLS certificate reloaded, but it has expired');
    else this.#log.info({ trigger, ...details }, 'TLS certificate reloaded');
  }
}
