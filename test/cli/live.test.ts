import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { ROOT } from '../helpers/daemon.ts';
import { send, until } from '../helpers/http.ts';
import { useAdminCli } from './run.ts';

const cli = useAdminCli();
const { monctl } = cli;

/** Starts a piped live command; collects its NDJSON lines until stopped with SIGINT. */
function follow(args: string[]) {
  const child = spawn(join(ROOT, 'bin/monctl'), args, {
    env: { ...process.env, MONCTL_SERVER: cli.d.url, MONCTL_API_KEY: cli.d.adminKey, MONCTL_CONFIG_DIR: cli.home.dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  const exited = new Promise<number | null>((r) => child.on('close', r));
  return {
    events: () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event: string; id: string | null; data: any }),
    stop: async () => {
      child.kill('SIGINT');
      return exited;
    },
  };
}

describe('resources check and add --wait', () => {
  it('check exits 5 when NOT_AVAILABLE, 0 when AVAILABLE', async () => {
    expect(
      (await monctl(['resources', 'add', 'health', '--type', 'HTTP', '--target', `${cli.d.url}/actuator/health`, '--interval', '3600']))
        .code,
    ).toBe(0);
    expect((await monctl(['resources', 'add', 'closed', '--type', 'TCP', '--target', '127.0.0.1:1', '--interval', '3600'])).code).toBe(0);
    const ok = await monctl(['resources', 'check', 'health', '-o', 'json']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.json()).toMatchObject({ status: 'AVAILABLE' });
    const check = await monctl(['resources', 'check', 'closed']);
    expect(check.code).toBe(5);
    expect(check.stdout).toMatch(/^STATUS\tNOT_AVAILABLE$/m);
    const history = await monctl(['resources', 'history', 'closed']);
    expect(history.stdout.split('\n')[0]).toBe('ID\tCHECKED\tSTATUS\tLOCATION\tMS\tERROR\tMESSAGE');
    expect(history.stdout).toMatch(/NOT_AVAILABLE\tdaemon\t\d+\tCONNECTION_ERROR/);
  });

  // Relies on the probe scheduler checking a new active resource at once.
  it('add --wait exits 0 on AVAILABLE and 5 on NOT_AVAILABLE', async () => {
    const ok = await monctl([
      'resources',
      'add',
      'health-2',
      '--type',
      'HTTP',
      '--target',
      `${cli.d.url}/actuator/health`,
      '--wait',
      '-o',
      'json',
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.json()).toMatchObject({ name: 'health-2', currentStatus: 'available' });
    const bad = await monctl(['resources', 'add', 'closed-2', '--type', 'TCP', '--target', '127.0.0.1:1', '--wait']);
    expect(bad.code, bad.stderr).toBe(5);
    expect(bad.stdout).toMatch(/^STATUS\tnot_available$/m);
  }, 60_000);
});

describe('live views print NDJSON when piped', () => {
  it('topology --watch: SNAPSHOT then agent events', async () => {
    const f = follow(['topology', '--watch']);
    await until(() => f.events().some((e) => e.event === 'SNAPSHOT'));
    const agent = await cli.d.admin.call(operations.createAgent, { body: { name: 'piped' } });
    await cli.d.admin.call(operations.deleteAgent, { params: { id: agent.id } });
    await until(() => f.events().some((e) => e.event === 'AGENT_DELETED'));
    await f.stop();
    const kinds = f.events().map((e) => e.event);
    expect(kinds.slice(0, 1)).toEqual(['SNAPSHOT']);
    expect(kinds).toEqual(expect.arrayContaining(['AGENT_CREATED', 'AGENT_DELETED']));
    expect(f.events().find((e) => e.event === 'AGENT_CREATED')!.data.agent.name).toBe('piped');
  });

  it('status --watch: SNAPSHOT then CHECK_COMPLETED', async () => {
    const f = follow(['status', '--watch']);
    await until(() => f.events().some((e) => e.event === 'SNAPSHOT'));
    await monctl(['resources', 'check', 'health']);
    await until(() => f.events().some((e) => e.event === 'CHECK_COMPLETED'));
    await f.stop();
    expect(f.events()[0].data.resources.map((r: { name: string }) => r.name)).toContain('health');
  });

  it('routes log --follow: the recent past, then new entries, through a real agent', async () => {
    const target = createServer((req, res) => res.end(`hello ${req.url}`));
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    const agentRow = await cli.d.admin.call(operations.createAgent, { body: { name: 'logger' } });
    const { token } = await cli.d.admin.call(operations.rotateAgentToken, { params: { id: agentRow.id } });
    const route = await cli.d.admin.call(operations.createRoute, {
      body: {
        name: 'logged',
        type: 'HTTP',
        agentId: agentRow.id,
        target: `http://127.0.0.1:${(target.address() as AddressInfo).port}`,
        hostname: 'logged.test',
      },
    });
    const agent = spawn(join(ROOT, 'bin/monctl'), ['agent', '--server', cli.d.url, '--log-level', 'warn'], {
      env: { ...process.env, MONCTL_AGENT_TOKEN: token },
      stdio: 'ignore',
    });
    try {
      await until(async () => (await cli.d.admin.call(operations.getAgent, { params: { id: agentRow.id } })).status === 'CONNECTED');
      const hit = (path: string) => send(cli.d.edgeUrl, 'GET', path, { headers: { host: 'logged.test' } });
      expect((await hit('/before')).text).toBe('hello /before');
      await until(
        async () => (await cli.d.admin.call(operations.getRouteLog, { params: { id: route.id }, query: { limit: 10 } })).length > 0,
      );
      const f = follow(['routes', 'log', 'logged', '--follow']);
      await until(() => f.events().some((e) => e.data.path === '/before'));
      await hit('/after');
      await until(() => f.events().some((e) => e.data.path === '/after'));
      await f.stop();
      expect(f.events().map((e) => e.data.path)).toEqual(['/before', '/after']);
      expect(f.events().every((e) => e.event === 'LOG')).toBe(true);
      const table = await monctl(['routes', 'log', 'logged']);
      expect(table.stdout).toMatch(/\tGET\t\/after\t200\t/);
    } finally {
      agent.kill('SIGKILL');
      target.close();
    }
  });

  it('routes log --follow of an unknown route exits 3', async () => {
    expect((await monctl(['routes', 'log', '424242', '--follow'])).code).toBe(3);
  });
});
