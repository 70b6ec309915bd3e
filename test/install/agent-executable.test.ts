import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { VERSION } from '../../src/version.ts';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { edge, startTarget, until } from '../tunnel/helpers.ts';
import { cleanEnv } from './node-versions.ts';

/**
 * `npm run build:agent`: the single executable runs alone in an empty
 * directory, with no Node on PATH and no node_modules anywhere near it, and
 * carries real traffic through a route.
 */
let dir: string;
let d: TestDaemon;
const agentBin = () => join(dir, 'run', 'monctl-agent');
/** A PATH on which there is no node at all. */
const noNode = () => join(dir, 'empty-bin');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'monctl-sea-'));
  // Its own output directory: the package test's `npm pack` rebuilds dist/ meanwhile.
  const built = spawnSync('npm', ['run', '--silent', 'build:agent', '--', '--outdir', join(dir, 'build')], {
    cwd: ROOT,
    encoding: 'utf8',
    env: cleanEnv(),
  });
  expect(built.status, built.stderr).toBe(0);
  mkdirSync(join(dir, 'run'));
  mkdirSync(noNode());
  copyFileSync(join(dir, 'build/monctl-agent'), agentBin());
  chmodSync(agentBin(), 0o755);
  d = await startDaemon();
}, 180_000);
afterAll(async () => {
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the single-executable agent', () => {
  it('is one file, alone in its directory, with no Node on PATH', () => {
    expect(readdirSync(join(dir, 'run'))).toEqual(['monctl-agent']);
    expect(statSync(agentBin()).size).toBeGreaterThan(0);
    const which = spawnSync('/bin/sh', ['-c', 'command -v node || echo none'], { encoding: 'utf8', env: { PATH: noNode() } });
    expect(which.stdout.trim()).toBe('none');
    const r = spawnSync(agentBin(), ['--version'], { cwd: join(dir, 'run'), encoding: 'utf8', env: { PATH: noNode() } });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(VERSION);
  });

  it('tells a usage error apart (exit 2) like monctl agent', () => {
    const r = spawnSync(agentBin(), ['agent'], { cwd: join(dir, 'run'), encoding: 'utf8', env: { PATH: noNode() } });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--server is required');
  });

  it('connects and moves real bytes through a route, both ways', async () => {
    const target = await startTarget((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => res.end(`sea agent got ${Buffer.concat(chunks).length} bytes at ${req.url}`));
    });
    const created = await d.admin.call(operations.createAgent, { body: { name: 'sea' } });
    const { token } = await d.admin.call(operations.rotateAgentToken, { params: { id: created.id } });
    writeFileSync(join(dir, 'token'), token, { mode: 0o600 });
    await d.admin.call(operations.createRoute, {
      body: { name: 'sea-app', type: 'HTTP', agentId: created.id, target: target.url, hostname: 'sea.test' },
    });
    const agent = spawn(agentBin(), ['agent', '--server', d.url, '--token-file', join(dir, 'token')], {
      cwd: join(dir, 'run'),
      env: { PATH: noNode(), HOME: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    agent.stderr!.on('data', (c) => (stderr += c));
    try {
      await until(async () => (await d.admin.call(operations.getAgent, { params: { id: created.id } })).status === 'CONNECTED');
      const body = Buffer.alloc(3 * 1024 * 1024, 7);
      const res = await edge(d.edgeUrl, 'sea.test', 'POST', '/upload', body);
      expect(res.status).toBe(200);
      expect(res.text).toBe(`sea agent got ${body.length} bytes at /upload`);
      const agentRow = await d.admin.call(operations.getAgent, { params: { id: created.id } });
      expect(agentRow.version).toBe(VERSION);
      // A remote check (issue 19): the probe code the bundle carries compressed, compiled on first use.
      const located = await d.admin.call(operations.createResource, {
        body: { name: 'sea-check', resourceType: 'HTTP', target: `${target.url}/health`, active: false, locations: ['sea'] },
      });
      const entry = await d.admin.call(operations.checkResource, { params: { id: located.id } });
      expect(entry).toMatchObject({ status: 'AVAILABLE', location: 'sea', message: '200 OK' });
    } finally {
      agent.kill('SIGTERM');
      await new Promise((r) => agent.once('exit', r));
      await target.close();
    }
    expect(stderr).toBe('');
  });
});
