import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { operations } from '../../src/api/operations.ts';
import { ApiClient } from '../../src/client/api-client.ts';
import { run } from './procs.ts';
import type { BenchPath } from './tunnel-peers.ts';

export interface MonctlTunnel extends BenchPath {
  /** The admin API, the agent and the daemon's `--edge-tls-listen` URL (the HTTPS row). */
  admin: ApiClient;
  agentId: number;
  edgeTls: string;
  daemonPid: number;
  agentPid: number;
  /** Adds a route (another hostname, same agent and target), for the slow-reader attack. */
  addRoute(hostname: string): Promise<void>;
  /** Creates another agent, with its own token, and runs it as the first one runs (the pool row). */
  addAgent(name: string): Promise<{ id: number; pid: number }>;
}

/**
 * monctl as shipped: `npm run build`, then the daemon from dist/monctl.js (with bin/monctl's
 * Node flags) and the agent from dist/agent.mjs as the README runs it. One agent, one route
 * (bench.test) to the target; `addAgent` runs more (the three-agent row). `fromSources` runs both from the TypeScript sources (bin/monctl)
 * instead. With `profDir` the daemon writes a V8 CPU profile there when it exits.
 */
export async function startMonctl(
  root: string,
  dir: string,
  target: string,
  opts: { fromSources: boolean; profDir?: string },
): Promise<MonctlTunnel> {
  const node = join(root, 'node_modules/.bin/node');
  if (!opts.fromSources) {
    const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`npm run build failed: ${built.stderr}`);
  }
  // MONCTL_BENCH_DAEMON_FLAGS: more Node flags for the daemon (--perf-basic-prof for perf(1), …).
  const prof = [
    ...(opts.profDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.profDir}`] : []),
    ...(process.env.MONCTL_BENCH_DAEMON_FLAGS ?? '').split(' ').filter(Boolean),
  ];
  const daemonCmd: [string, string[]] = opts.fromSources
    ? [node, ['--disable-warning=ExperimentalWarning', '--max-semi-space-size=16', ...prof, join(root, 'bin/monctl.ts'), 'daemon']]
    : [node, ['--max-semi-space-size=16', ...prof, join(root, 'dist/monctl.js'), 'daemon']];
  const [daemon, urls] = await run(
    daemonCmd[0],
    [
      ...daemonCmd[1],
      '--listen',
      '127.0.0.1:0',
      '--edge-listen',
      '127.0.0.1:0',
      '--edge-tls-listen',
      '127.0.0.1:0',
      '--data-dir',
      join(dir, 'data'),
    ],
    {
      cwd: root,
      env: { MONCTL_ADMIN_PASSWORD: 'bench-admin-password', MONCTL_SCHEDULER: 'off' },
      ready: (l) => (l.includes('"listening"') ? `${JSON.parse(l).edge} ${JSON.parse(l).api} ${JSON.parse(l).edgeTls}` : undefined),
    },
  );
  const [edge, api, edgeTls] = urls.split(' ');
  const admin = new ApiClient({
    server: api,
    credential: { kind: 'api-key', token: readFileSync(join(dir, 'data/admin-api-key'), 'utf8').trim() },
  });
  const addAgent = async (name: string) => {
    const agentRow = await admin.call(operations.createAgent, { body: { name } });
    const { token } = await admin.call(operations.rotateAgentToken, { params: { id: agentRow.id } });
    const tokenFile = join(dir, `token-${name}`);
    writeFileSync(tokenFile, token, { mode: 0o600 });
    const agentArgs = ['agent', '--server', api, '--token-file', tokenFile, '--log-level', 'warn'];
    const [agent] = await (opts.fromSources
      ? run(join(root, 'bin/monctl'), agentArgs, { cwd: root })
      : run(node, ['--max-semi-space-size=1', '--no-maglev', join(root, 'dist/agent.mjs'), ...agentArgs.slice(1)], { cwd: root }));
    while ((await admin.call(operations.getAgent, { params: { id: agentRow.id } })).status !== 'CONNECTED')
      await new Promise((r) => setTimeout(r, 100));
    return { id: agentRow.id, pid: agent.pid! };
  };
  const first = await addAgent('bench');
  const addRoute = async (hostname: string) => {
    await admin.call(operations.createRoute, {
      body: { name: hostname.replace(/\W/g, '-'), type: 'HTTP', agentId: first.id, target, hostname },
    });
  };
  await addRoute('bench.test');
  return {
    name: 'monctl',
    url: edge,
    host: 'bench.test',
    admin,
    agentId: first.id,
    edgeTls,
    daemonPid: daemon.pid!,
    agentPid: first.pid,
    addRoute,
    addAgent,
    procs: { daemon: () => [daemon.pid!], agent: () => [first.pid] },
  };
}
