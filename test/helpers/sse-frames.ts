export interface SseEvent {
  id: string;
  event: string;
  data: any;
}

/**
 * An incremental SSE parser for tests that read a stream byte by byte over
 * their own connection: feed it chunks, it returns the named events completed
 * so far (comments and unnamed frames skipped), `data` parsed as JSON.
 */
export function sseParser(): (chunk: string) => SseEvent[] {
  let buffer = '';
  return (chunk) => {
    buffer += chunk;
    const events: SseEvent[] = [];
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const fields: Record<string, string> = {};
      for (const line of buffer.slice(0, end).split('\n')) {
        const colon = line.indexOf(':');
        if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
      }
      buffer = buffer.slice(end + 2);
      if (fields.event) events.push({ id: fields.id, event: fields.event, data: JSON.parse(fields.data ?? 'null') });
    }
    return events;
  };
}
