import { render } from 'ink-testing-library';
import React from 'react';
import { describe, expect, it } from 'vitest';
import { applyMarks, applyStatusEvent, marksOf, visibleRows } from '../../cli/tui/status-model.ts';
import { StatusApp, StatusView } from '../../cli/tui/status-view.tsx';
import type { StreamEvent, StreamState } from '../../cli/tui/stream.ts';

const h = React.createElement;
const at = '2026-11-21T10:00:00';
const snap = {
  resources: [
    {
      resourceId: 1,
      name: 'api',
      resourceType: 'HTTP',
      currentStatus: 'available',
      latestCheckStatus: 'AVAILABLE',
      latestCheckedAt: at,
      latestMessage: '200 OK',
      latestErrorCode: null,
    },
    {
      resourceId: 2,
      name: 'db',
      resourceType: 'TCP',
      currentStatus: 'not_available',
      latestCheckStatus: 'NOT_AVAILABLE',
      latestCheckedAt: at,
      latestMessage: 'refused',
      latestErrorCode: 'CONNECTION_ERROR',
    },
  ],
};
const incident = (id: number, resourceId: number, resolvedAt: string | null = null) => ({
  id,
  resourceId,
  agentId: null,
  openedAt: at,
  resolvedAt,
  durationSeconds: 0,
  cause: { message: 'x', errorCode: '500' },
  checks: 3,
  maintenance: false,
});

/** `status --watch` marks open incidents (events and, for ADMIN, the admin API) and maintenance. */
describe('status marks', () => {
  it('INCIDENT_OPENED marks a row and sorts it first; INCIDENT_RESOLVED of the same incident clears it', () => {
    let rows = applyStatusEvent(new Map(), 'SNAPSHOT', snap);
    rows = applyStatusEvent(rows, 'INCIDENT_OPENED', incident(7, 1));
    const opened = new Date(at).getTime();
    expect(marksOf(rows.get(1)!, opened + 65_000)).toEqual({ incident: 'incident 1m05s', maintenance: false });
    expect(visibleRows(rows, '').map((r) => r.name)).toEqual(['api', 'db']);
    rows = applyStatusEvent(rows, 'INCIDENT_RESOLVED', incident(6, 1, at)); // an older one: no change
    expect(rows.get(1)!.incident?.id).toBe(7);
    rows = applyStatusEvent(rows, 'INCIDENT_RESOLVED', incident(7, 1, at));
    expect(rows.get(1)!.incident).toBeNull();
    expect(visibleRows(rows, '').map((r) => r.name)).toEqual(['db', 'api']);
  });

  it('the admin marks set open incidents and maintenance, and survive a new SNAPSHOT', () => {
    let rows = applyStatusEvent(new Map(), 'SNAPSHOT', snap);
    rows = applyMarks(rows, { incidents: [incident(3, 2)], inMaintenance: [1] });
    expect(rows.get(2)!.incident).toMatchObject({ id: 3 });
    expect(rows.get(1)!.maintenance).toBe(true);
    rows = applyStatusEvent(rows, 'SNAPSHOT', snap);
    expect(rows.get(2)!.incident).toMatchObject({ id: 3 });
    const { lastFrame, unmount } = render(
      h(StatusView, { rows, state: 'live', filter: '', editing: false, now: new Date(at).getTime() + 5000 }),
    );
    const frame = lastFrame()!;
    expect(frame).toMatch(/ALERT/);
    expect(frame).toMatch(/db .*incident 5s/);
    expect(frame).toMatch(/api .*maint/);
    unmount();
  });

  it('StatusApp asks for the marks once the SNAPSHOT is in', async () => {
    let handlers: { onEvent: (e: StreamEvent) => void; onState: (s: StreamState) => void } | undefined;
    let asked = 0;
    const app = render(
      h(StatusApp, {
        subscribe: (hs: typeof handlers & object) => {
          handlers = hs;
          return () => undefined;
        },
        onFatal: () => undefined,
        marks: async () => {
          asked++;
          return { incidents: [incident(9, 1)], inMaintenance: [2] };
        },
      }),
    );
    handlers!.onEvent({ event: 'SNAPSHOT', id: null, data: snap });
    while (!/api .*incident/.test(app.lastFrame()!) || !/db .*maint/.test(app.lastFrame()!)) await new Promise((r) => setTimeout(r, 50));
    expect(asked).toBe(1);
    app.unmount();
  });
});
