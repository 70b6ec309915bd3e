import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { bearer, login, sendJson } from '../helpers/http.ts';

/**
 * Passwords, API keys, registration tokens and registry passwords are used in
 * every way the API allows, then looked for everywhere they must not be: the
 * daemon's logs (stdout and stderr), every list and detail response after the
 * one-time display, and the database files on disk (hashed or encrypted there).
 */
let d: TestDaemon;
const secrets: Record<string, string> = {};
const responses: string[] = [];

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = bearer(d.adminKey)) {
  const res = await sendJson(d.url, method, path, body, headers);
  responses.push(res.text);
  return res;
}

beforeAll(async () => {
  d = await startDaemon({ env: { MONCTL_LOG_LEVEL: 'debug' } });
  secrets.adminPassword = ADMIN_PASSWORD;
  secrets.bootstrapKey = d.adminKey;
  secrets.userPassword = 'user-password-that-must-not-leak';
  secrets.registryPassword = 'registry-password-that-must-not-leak';
  await call('POST', '/admin/api/users', { username: 'leaky', password: secrets.userPassword, role: 'USER' });
  await login(d.url, 'leaky', secrets.userPassword);
  await login(d.url, 'leaky', `${secrets.userPassword}-wrong`);
  const key = (await call('POST', '/admin/api/api-keys', { name: 'leak-check' })).json();
  secrets.apiKey = key.token;
  responses.pop(); // the one-time display
  await call('GET', '/api/me', undefined, bearer(secrets.apiKey));
  await call('GET', '/api/me', undefined, { 'x-api-key': secrets.apiKey });
  await call('POST', '/admin/api/registry-credentials', {
    registry: 'registry.example.test',
    username: 'bot',
    password: secrets.registryPassword,
  });
  const agent = (await call('POST', '/admin/api/agents', { name: 'leak-agent' })).json();
  secrets.registrationToken = (await call('POST', `/admin/api/agents/${agent.id}/token`)).json().token;
  responses.pop();
  await call('GET', '/admin/tunnel', undefined, { authorization: `Bearer ${secrets.registrationToken}` });
  await call(
    'PUT',
    `/admin/api/users/${(await call('GET', '/admin/api/users')).json().find((u: { username: string }) => u.username === 'leaky').id}`,
    { password: `${secrets.userPassword}-2` },
  );
  for (const path of [
    '/admin/api/users',
    '/admin/api/api-keys',
    '/admin/api/registry-credentials',
    '/admin/api/agents',
    `/admin/api/agents/${agent.id}`,
    '/admin/api/topology',
  ])
    await call('GET', path);
});

afterAll(async () => {
  await d?.stop();
});

describe('secrets stay secret', () => {
  it('appear in no log line, stdout or stderr', () => {
    const logs = d.logs.map((l) => JSON.stringify(l)).join('\n') + d.stderr();
    expect(logs).toContain('login failed'); // the run did log what it did
    for (const [name, value] of Object.entries(secrets)) expect(logs.includes(value), name).toBe(false);
  });

  it('appear in no API response after their one-time display', () => {
    expect(responses.length).toBeGreaterThan(10);
    const all = responses.join('\n');
    for (const [name, value] of Object.entries(secrets)) expect(all.includes(value), name).toBe(false);
  });

  it('are stored hashed or encrypted, never in clear', async () => {
    const files = readdirSync(d.dataDir).filter((f) => f.startsWith('monctl.db'));
    expect(files.length).toBeGreaterThan(0);
    const bytes = Buffer.concat(files.map((f) => readFileSync(join(d.dataDir, f))));
    for (const name of ['adminPassword', 'userPassword', 'registryPassword', 'registrationToken', 'apiKey'] as const) {
      expect(bytes.includes(Buffer.from(secrets[name])), name).toBe(false);
    }
  });
});
