import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/api/operations.ts';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { send, until } from '../helpers/http.ts';

/**
 * The live views (status --watch, topology --watch, routes log --follow) in a
 * real terminal, tmux, at 60, 80 and 120 columns, and resized while running
 * from 120 to 60: no line longer than the terminal (`capture-pane -J` joins
 * what the terminal wrapped), a one-line title, columns apart, whole values,
 * and nothing left of the old layout. Every capture is printed.
 */
const socket = `monctl-tui-widths-${process.pid}`;
const tmux = (...args: string[]) =>
  execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
/** The screen as text, wrapped lines joined (so a wrap shows as a line longer than the terminal). */
const capture = (s: string) => tmux('capture-pane', '-p', '-J', '-t', s).split('\n').slice(0, 24);
const show = (label: string, lines: string[]) => console.log(`--- ${label}\n${lines.map((l) => `|${l.trimEnd()}`).join('\n')}\n---`);
const width = (l: string) => [...l].length;

let d: TestDaemon;
let agent: ChildProcess;
let target: Server;
let routeName = '';
const sessions: string[] = [];

function open(name: string, columns: number, args: string) {
  tmux(
    'new-session',
    '-d',
    '-s',
    name,
    '-x',
    String(columns),
    '-y',
    '24',
    `MONCTL_SERVER=${d.url} MONCTL_API_KEY=${d.adminKey} ${join(ROOT, 'bin/monctl')} ${args}`,
  );
  sessions.push(name);
  return () => capture(name);
}

/** Waits up to `ms` for the probe (a bounded wait on what the screen shows), then says whether it held. */
async function waitFor(probe: () => boolean, ms = 20_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (probe()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return probe();
}

const tokens = (line: string) => line.trim().split(/\s+/);

/** A table view at `columns`: the checks every capture must pass. Returns the data rows. */
function checkTable(lines: string[], columns: number, title: RegExp, headers: string[]): string[] {
  for (const l of lines) expect(width(l), `longer than ${columns}: ${l}`).toBeLessThanOrEqual(columns);
  expect(lines[0]).toMatch(title);
  expect(tokens(lines[1])).toEqual(headers);
  const rows = lines.slice(2).filter((l) => l.trim() && !l.startsWith('…') && !/waiting for/.test(l));
  // Every column starts after a space (the right-aligned MS is checked by the column after it; a row may end early).
  const starts = headers
    .filter((h) => h !== 'MS')
    .map((h) => lines[1].indexOf(h))
    .filter((i) => i > 0);
  for (const row of rows) for (const i of starts) if (row.length >= i) expect(row[i - 1], `no space before column ${i}: ${row}`).toBe(' ');
  return rows;
}

const STATUS_ALL = ['NAME', 'TYPE', 'STATUS', 'ALERT', 'AGE', 'MS', 'RECENT'];
const STATUS_AT = (c: number) => (c >= 80 ? STATUS_ALL : ['NAME', 'TYPE', 'STATUS', 'ALERT', 'AGE']);
const LOG_ALL = ['AT', 'METHOD', 'PATH', 'STATUS', 'MS', 'CLIENT', 'ERROR'];
const LOG_AT = (c: number) => (c >= 80 ? LOG_ALL : LOG_ALL.filter((h) => h !== 'CLIENT'));
const RESOURCES = ['web-frontend-production-eu-west', 'db', 'api'];

/** The status screen at `columns`, all resources listed: TYPE whole in its column. */
function checkStatus(lines: string[], columns: number) {
  const rows = checkTable(lines, columns, /^monctl status {2}● live {2}\/ to filter, q to quit$/, STATUS_AT(columns));
  const type = lines[1].indexOf('TYPE');
  for (const row of rows) expect(row.slice(type), row).toMatch(/^(HTTP|TCP) +(available|not_available|unknown) /);
  return rows;
}

beforeAll(async () => {
  d = await startDaemon();
  const { admin } = d;
  await admin.call(operations.createResource, {
    body: { name: RESOURCES[0], resourceType: 'HTTP', target: `${d.url}/actuator/health`, intervalSeconds: 3600 },
  });
  await admin.call(operations.createResource, {
    body: { name: 'db', resourceType: 'TCP', target: '127.0.0.1:1', intervalSeconds: 3600, failureThreshold: 1 },
  });
  await admin.call(operations.createResource, {
    body: { name: 'api', resourceType: 'HTTP', target: `${d.url}/actuator/health`, intervalSeconds: 3600 },
  });
  target = createServer((req, res) => res.end(`hello ${req.url}`));
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  const a = await admin.call(operations.createAgent, { body: { name: 'office-agent' } });
  const route = await admin.call(operations.createRoute, {
    body: {
      name: 'storefront',
      type: 'HTTP',
      agentId: a.id,
      target: `http://127.0.0.1:${(target.address() as AddressInfo).port}`,
      hostname: 'storefront.a-rather-long-hostname.example.test',
    },
  });
  routeName = route.name;
  const { token } = await admin.call(operations.rotateAgentToken, { params: { id: a.id } });
  agent = spawn(join(ROOT, 'bin/monctl'), ['agent', '--server', d.url, '--log-level', 'warn'], {
    env: { ...process.env, MONCTL_AGENT_TOKEN: token },
    stdio: 'ignore',
  });
  await until(async () => (await admin.call(operations.getAgent, { params: { id: a.id } })).status === 'CONNECTED');
  for (const path of ['/', '/products/a-long-product-path-that-will-not-fit-in-sixty-columns?page=2', '/cart']) {
    await send(d.edgeUrl, 'GET', path, { headers: { host: 'storefront.a-rather-long-hostname.example.test' } });
  }
  // Every resource checked once (created active), so each row has a status, an age and a sparkline.
  await until(async () => (await admin.call(operations.listAdminResources)).every((r) => r.currentStatus !== 'unknown'));
  await until(async () => (await admin.call(operations.getRouteLog, { params: { id: route.id }, query: { limit: 10 } })).length === 3);
});

afterAll(async () => {
  agent?.kill('SIGKILL');
  target?.close();
  try {
    tmux('kill-server');
  } catch {
    // already gone
  }
  await d?.stop();
});

describe('status --watch', () => {
  for (const columns of [60, 80, 120]) {
    it(`fits ${columns} columns: one-line header, columns apart, TYPE whole, the columns of that width`, async () => {
      const screen = open(`status-${columns}`, columns, 'status --watch');
      // db's incident opens a moment after its first failing check: it may come by the stream after the rows.
      await waitFor(
        () =>
          RESOURCES.every((n) => screen().some((l) => l.startsWith(n.slice(0, 12)))) &&
          /● live/.test(screen()[0]) &&
          /incident \d+s/.test(screen().join('\n')),
      );
      const lines = screen();
      show(`status --watch at ${columns}x24`, lines);
      expect(checkStatus(lines, columns)).toHaveLength(3);
      expect(lines.join('\n')).toMatch(/incident \d+s/);
      if (columns === 60) expect(lines.join('\n')).toMatch(/web-frontend-pro…/);
    });
  }

  it('a resource created while the view runs shows its real TYPE', async () => {
    const screen = () => capture('status-80');
    await d.admin.call(operations.createResource, {
      body: {
        name: 'late-comer',
        resourceType: 'TCP',
        target: `127.0.0.1:${(target.address() as AddressInfo).port}`,
        intervalSeconds: 3600,
      },
    });
    const row = () => screen().find((l) => l.startsWith('late-comer'));
    await waitFor(() => /^late-comer +TCP +available /.test(row() ?? ''));
    show('status --watch at 80x24 after late-comer was created', screen());
    expect(row()).toMatch(/^late-comer +TCP +available /);
    expect(checkStatus(screen(), 80)).toHaveLength(4);
  });

  it('re-lays the screen when resized from 120 to 60, with nothing left of the old layout', async () => {
    const n = (await d.admin.call(operations.listAdminResources)).length;
    const before = open('status-resize', 120, 'status --watch');
    await waitFor(
      () =>
        tokens(before()[1]).length === 7 &&
        before()
          .slice(2)
          .filter((l) => l.trim()).length === n,
    );
    tmux('resize-window', '-t', 'status-resize', '-x', '60');
    const clean = () => {
      const lines = capture('status-resize');
      // The 60-column header, a row per resource, and below them only blank lines.
      return (
        tokens(lines[1]).join(' ') === STATUS_AT(60).join(' ') &&
        lines.slice(2 + n).every((l) => !l.trim()) &&
        lines.every((l) => width(l) <= 60)
      );
    };
    await waitFor(clean);
    const lines = capture('status-resize');
    show('status --watch resized from 120 to 60', lines);
    expect(checkStatus(lines, 60)).toHaveLength(n);
    expect(lines.slice(2 + n).filter((l) => l.trim())).toEqual([]);
    expect(lines.join('\n')).not.toMatch(/RECENT|█|▁/);
  });
});

describe('routes log --follow', () => {
  const title = () => new RegExp(`^monctl routes log ${routeName} \\(storefront\\..*● live {2}q to quit$`);
  for (const columns of [60, 80, 120]) {
    it(`fits ${columns} columns with the route's name in the title and the columns of routes log`, async () => {
      const screen = open(`log-${columns}`, columns, `routes log ${routeName} --follow`);
      await waitFor(() => screen().some((l) => / \/cart /.test(l)) && /● live/.test(screen()[0]));
      const lines = screen();
      show(`routes log --follow at ${columns}x24`, lines);
      const rows = checkTable(lines, columns, title(), LOG_AT(columns));
      expect(rows).toHaveLength(3);
      // The non-follow table's order, with the time of day only where a full timestamp does not fit.
      for (const row of rows) expect(row).toMatch(columns >= 120 ? /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d GET / : /^\d\d:\d\d:\d\d +GET /);
      expect(lines.join('\n')).toMatch(/\/products\/a-long.*… +200 /);
    });
  }

  it('re-lays the screen when resized from 120 to 60', async () => {
    const before = open('log-resize', 120, `routes log ${routeName} --follow`);
    await waitFor(() => tokens(before()[1]).length === 7 && before().some((l) => / \/cart /.test(l)));
    tmux('resize-window', '-t', 'log-resize', '-x', '60');
    await waitFor(
      () =>
        tokens(before()[1]).join(' ') === LOG_AT(60).join(' ') &&
        before()
          .slice(5)
          .every((l) => !l.trim()),
    );
    const lines = before();
    show('routes log --follow resized from 120 to 60', lines);
    expect(checkTable(lines, 60, title(), LOG_AT(60))).toHaveLength(3);
    expect(lines.slice(5).filter((l) => l.trim())).toEqual([]);
  });
});

describe('topology --watch', () => {
  const check = (lines: string[], columns: number) => {
    for (const l of lines) expect(width(l), `longer than ${columns}: ${l}`).toBeLessThanOrEqual(columns);
    expect(lines[0]).toMatch(/^monctl topology {2}● live {2}q to quit$/);
    expect(lines[1]).toMatch(/^╭─+╮$/);
    // Every line of the box is closed on the right: nothing wrapped out of it.
    const box = lines.slice(
      2,
      lines.findIndex((l) => l.startsWith('╰')),
    );
    // Each line of the tree is one terminal line, cut with `…` rather than wrapped onto a next one.
    for (const l of box) expect(l, l).toMatch(/^│ (pod |not connected|routes| +└ |… \d+ more).* │$/);
    expect(box.some((l) => /└ route storefront HTTP storefront\./.test(l))).toBe(true);
  };
  for (const columns of [60, 80, 120]) {
    it(`fits ${columns} columns`, async () => {
      const screen = open(`topo-${columns}`, columns, 'topology --watch');
      await waitFor(() => screen().some((l) => /route storefront/.test(l)) && /● live/.test(screen()[0]));
      const lines = screen();
      show(`topology --watch at ${columns}x24`, lines);
      check(lines, columns);
      if (columns === 120) expect(lines.join('\n')).toMatch(/in flight: 0/);
    });
  }

  it('re-lays the screen when resized from 120 to 60', async () => {
    const before = open('topo-resize', 120, 'topology --watch');
    await waitFor(() => before().some((l) => /in flight: 0/.test(l)));
    tmux('resize-window', '-t', 'topo-resize', '-x', '60');
    await waitFor(() => width(before()[1]) === 60 && before().filter((l) => /^monctl topology/.test(l)).length === 1);
    const lines = before();
    show('topology --watch resized from 120 to 60', lines);
    check(lines, 60);
    expect(lines.filter((l) => /monctl topology|^Events/.test(l))).toHaveLength(2);
  });
});
