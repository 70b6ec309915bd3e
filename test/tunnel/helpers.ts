import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { operations } from '../../src/api/operations.ts';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { type SseEvent, sseParser } from '../helpers/sse-frames.ts';

export type { SseEvent };

export interface TestAgent {
  proc: ChildProcess;
  logs: Array<Record<string, unknown>>;
  stderr: () => string;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string | null>;
  stop(signal?: NodeJS.Signals): Promise<number | string | null>;
}

const agents = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of agents) p.kill('SIGKILL');
});

/** Runs `bin/monctl agent` (or `command agent`: an installed monctl, the single-executable agent) as a real child process. */
export function startAgent(
  server: string,
  tokenFile: string,
  args: string[] = [],
  env: Record<string, string> = {},
  command = join(ROOT, 'bin/monctl'),
): TestAgent {
  const proc = spawn(command, ['agent', '--server', server, '--token-file', tokenFile, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  agents.add(proc);
  const logs: Array<Record<string, unknown>> = [];
  let stderr = '';
  let buffer = '';
  proc.stderr!.on('data', (c) => (stderr += c));
  proc.stdout!.on('data', (c) => {
    buffer += c;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      try {
        logs.push(JSON.parse(line));
      } catch {
        logs.push({ raw: line });
      }
    }
  });
  const exited = new Promise<number | string | null>((resolve) => {
    proc.once('exit', (code, signal) => {
      agents.delete(proc);
      resolve(code ?? signal);
    });
  });
  return {
    proc,
    logs,
    stderr: () => stderr,
    exited,
    stop(signal = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}

/** Polls until `check` returns a truthy value (no timing assertion: the test timeout bounds it). */
export async function until<T>(check: () => Promise<T | undefined | false> | T | undefined | false, everyMs = 50): Promise<T> {
  for (;;) {
    const value = await check();
    if (value) return value;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export interface Tunnel {
  daemon: TestDaemon;
  agentId: number;
  tokenFile: string;
  agent: TestAgent;
  dir: string;
  startAgent(args?: string[]): TestAgent;
  waitStatus(status: 'CONNECTED' | 'DISCONNECTED'): Promise<void>;
  httpRoute(name: string, target: string, hostname: string, pathPrefix?: string): Promise<number>;
  close(): Promise<void>;
}

/** A daemon, one agent slot with a token (through the admin API), and `monctl agent` connected to it. */
export async function startTunnel(agentArgs: string[] = [], daemonArgs: string[] = [], env: Record<string, string> = {}): Promise<Tunnel> {
  const daemon = await startDaemon({ args: daemonArgs, env });
  const dir = mkdtempSync(join(tmpdir(), 'monctl-agent-'));
  const admin = daemon.admin;
  const created = await admin.call(operations.createAgent, { body: { name: 'edge-agent' } });
  const { token } = await admin.call(operations.rotateAgentToken, { params: { id: created.id } });
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  const running: TestAgent[] = [];
  const tunnel: Tunnel = {
    daemon,
    agentId: created.id,
    tokenFile,
    dir,
    agent: undefined as unknown as TestAgent,
    startAgent(args = agentArgs) {
      const agent = startAgent(daemon.url, tokenFile, args);
      running.push(agent);
      return agent;
    },
    async waitStatus(status) {
      await until(async () => (await admin.call(operations.getAgent, { params: { id: created.id } })).status === status);
    },
    async httpRoute(name, target, hostname, pathPrefix) {
      const route = await admin.call(operations.createRoute, {
        body: { name, type: 'HTTP', agentId: created.id, target, hostname, ...(pathPrefix ? { pathPrefix } : {}) },
      });
      return route.id;
    },
    async close() {
      await Promise.all(running.map((a) => a.stop('SIGKILL')));
      await daemon.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  tunnel.agent = tunnel.startAgent();
  await tunnel.waitStatus('CONNECTED');
  return tunnel;
}

/** A target HTTP server on 127.0.0.1 with an OS-chosen port. */
export async function startTarget(
  handler: RequestListener,
): Promise<{ server: Server; url: string; port: number; close(): Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface EdgeResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

/** One request to the edge with a given Host header (fresh connection, whole body read). */
export function edge(
  edgeUrl: string,
  host: string,
  method: string,
  path: string,
  body?: string | Buffer,
  headers: Record<string, string> = {},
): Promise<EdgeResponse> {
  const url = new URL(edgeUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, agent: false, headers: { host, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const all = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: all, text: all.toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Subscribes to an SSE stream of the daemon and collects its events until closed. */
export function subscribe(daemon: TestDaemon, path: string): Promise<{ events: SseEvent[]; close(): void }> {
  const url = new URL(path, daemon.url);
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { 'x-api-key': daemon.adminKey, accept: 'text/event-stream' }, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`SSE ${path}: ${res.statusCode}`));
      const events: SseEvent[] = [];
      const parse = sseParser();
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => events.push(...parse(chunk)));
      res.on('error', () => {});
      resolve({ events, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}
