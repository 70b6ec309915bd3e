import { Agent, request } from 'undici';

/** When a push check's missed deadline reached the watcher: the entry's checkedAt and the arrival of its event (epoch ms). */
export interface Missed {
  checkedAt: number;
  receivedAt: number;
}

/**
 * Reads `/api/events` as ADMIN for bench:push: counts every CHECK_COMPLETED (each ping is one)
 * and keeps, per resource, the first `MISSED_PING` entry and when its event arrived. The
 * stream is parsed frame by frame without re-scanning what was read, so that 2,000 events a
 * second cost the bench little.
 */
export class PushWatch {
  readonly missed = new Map<number, Missed>();
  /** MISSED_PING entries beyond the first of a resource. */
  repeatedMisses = 0;
  checks = 0;
  closed: string | undefined;
  private readonly dispatcher = new Agent({ bodyTimeout: 0, headersTimeout: 30_000 });
  private abort = new AbortController();

  async connect(url: string, adminKey: string): Promise<void> {
    const res = await request(`${url}/api/events`, {
      dispatcher: this.dispatcher,
      headers: { 'x-api-key': adminKey, accept: 'text/event-stream' },
      signal: this.abort.signal,
    });
    if (res.statusCode !== 200) throw new Error(`/api/events: ${res.statusCode} ${await res.body.text()}`);
    res.body.setEncoding('utf8');
    let rest = '';
    res.body.on('data', (chunk: string) => {
      const frames = (rest + chunk).split('\n\n');
      rest = frames.pop()!;
      for (const frame of frames) this.frame(frame);
    });
    res.body.on('end', () => (this.closed ??= 'the daemon ended the stream'));
    res.body.on('error', (err) => (this.closed ??= err.message));
  }

  private frame(frame: string): void {
    if (!frame.includes('event: CHECK_COMPLETED')) return;
    this.checks++;
    if (!frame.includes('MISSED_PING')) return;
    const data = frame.split('\n').find((line) => line.startsWith('data:'))!;
    const entry = JSON.parse(data.slice(5)) as { resourceId: number; errorCode: string | null; checkedAt: string };
    if (entry.errorCode !== 'MISSED_PING') return;
    if (this.missed.has(entry.resourceId)) this.repeatedMisses++;
    else this.missed.set(entry.resourceId, { checkedAt: Date.parse(entry.checkedAt), receivedAt: Date.now() });
  }

  async close(): Promise<void> {
    this.closed ??= 'closed by the bench';
    this.abort.abort();
    await this.dispatcher.destroy();
  }
}

/** The q-quantile of a list of numbers (NaN when empty). */
export function quantileOf(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}
