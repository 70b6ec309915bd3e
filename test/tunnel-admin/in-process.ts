import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultDaemonConfig } from '../../daemon/config/daemon-config.ts';
import { type RunningDaemon, startDaemon } from '../../daemon/daemon.ts';
import { send } from '../helpers/http.ts';

/**
 * The real daemon in this process, for the seams the data plane calls from
 * inside it (route log store, agent status, pods); everything else still goes
 * over HTTP with the bootstrap ADMIN key.
 */
export class InProcessDaemon {
  readonly base = mkdtempSync(join(tmpdir(), 'monctl-inproc-'));
  readonly dataDir = join(this.base, 'data');
  daemon!: RunningDaemon;
  key = '';

  get ctx() {
    return this.daemon.ctx;
  }
  get url() {
    return this.daemon.apiUrl;
  }

  async start(): Promise<void> {
    process.env.MONCTL_ADMIN_PASSWORD ??= 'in-process-admin-password';
    this.daemon = await startDaemon(
      defaultDaemonConfig({
        listen: { host: '127.0.0.1', port: 0 },
        edgeListen: { host: '127.0.0.1', port: 0 },
        dataDir: this.dataDir,
        logLevel: 'silent',
        sseHeartbeatMs: 15_000,
        checkResponses: true,
      }),
    );
    this.key = readFileSync(join(this.dataDir, 'admin-api-key'), 'utf8').trim();
  }

  call(method: string, path: string, body?: unknown) {
    return send(this.url, method, path, {
      headers: { 'x-api-key': this.key, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  }

  async stop(): Promise<void> {
    await this.daemon?.stop();
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.base, { recursive: true, force: true });
  }
}
