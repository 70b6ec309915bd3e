import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { startAgent, type TestAgent, until } from './helpers.ts';

/**
 * `monctl agent` gives up on a rejected registration token: exit 4 after
 * `--max-auth-failures` 401 answers in a row. Only 401 counts, and a
 * successful connection starts the count again. Small limits keep the
 * agent's real backoff (1 s, then 2 s, …) to a few seconds.
 */
let d: TestDaemon;
let dir: string;
const agents: TestAgent[] = [];
const run = (server: string, tokenFile: string, max: number) => {
  const agent = startAgent(server, tokenFile, ['--max-auth-failures', String(max)]);
  agents.push(agent);
  return agent;
};
const refusals = (a: TestAgent) => a.logs.filter((l) => l.msg === 'tunnel: dial failed' && l.status === 401).length;
const failures = (a: TestAgent) => a.logs.filter((l) => l.msg === 'tunnel: dial failed').length;

beforeAll(async () => {
  d = await startDaemon();
  dir = mkdtempSync(join(tmpdir(), 'monctl-agent-auth-'));
});
afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop('SIGKILL')));
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a rejected token', () => {
  it('ends the agent with exit 4 after --max-auth-failures refusals in a row, saying what to do', async () => {
    const file = join(dir, 'wrong.token');
    writeFileSync(file, 'not-a-registration-token\n', { mode: 0o600 });
    const agent = run(d.url, file, 2);
    expect(await agent.exited).toBe(4);
    expect(refusals(agent)).toBe(2);
    expect(agent.stderr()).toMatch(/rejected the registration token 2 time\(s\) in a row/);
    expect(agent.stderr()).toMatch(/monctl agents token/);
  }, 30_000);

  it('counts from zero again after a successful connection', async () => {
    const created = await d.admin.call(operations.createAgent, { body: { name: 'recovering' } });
    const { token } = await d.admin.call(operations.rotateAgentToken, { params: { id: created.id } });
    const file = join(dir, 'recovering.token');
    writeFileSync(file, 'stale-token\n', { mode: 0o600 });
    const agent = run(d.url, file, 2);
    await until(() => refusals(agent) === 1);
    // The token file is read before every dial: the next one connects.
    writeFileSync(file, `${token}\n`);
    await until(() => agent.logs.some((l) => l.msg === 'tunnel: connected'));
    // A new token disconnects the agent, whose file still holds the old one: refused again.
    await d.admin.call(operations.rotateAgentToken, { params: { id: created.id } });
    await until(() => refusals(agent) === 2);
    // Without the reset that second refusal would have been the last; here the agent redials.
    const second = agent.logs.findLastIndex((l) => l.msg === 'tunnel: dial failed');
    await until(() => agent.logs.slice(second).some((l) => l.msg === 'tunnel: reconnecting') || agent.proc.exitCode !== null);
    expect(agent.proc.exitCode).toBeNull();
    expect(await agent.exited).toBe(4);
    expect(refusals(agent)).toBe(3);
  }, 30_000);

  it('does not count an unreachable daemon', async () => {
    const file = join(dir, 'any.token');
    writeFileSync(file, 'whatever\n', { mode: 0o600 });
    // Port 1 refuses connections: network errors, not 401.
    const agent = run('http://127.0.0.1:1', file, 1);
    await until(() => failures(agent) >= 2 || agent.proc.exitCode !== null);
    expect(agent.proc.exitCode).toBeNull();
    expect(await agent.stop()).toBe(0);
  }, 30_000);
});
