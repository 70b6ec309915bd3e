import { randomUUID } from 'node:crypto';
import { json, type ProviderReceiver, provider } from './pager-receivers.ts';

/**
 * A Matrix homeserver on loopback, written from the Client-Server API v1.11:
 * https://spec.matrix.org/v1.11/client-server-api/#put_matrixclientv3roomsroomidsendeventtypetxnid
 * and #get_matrixclientv3directoryroomroomalias (`{errcode, error}`, 429 M_LIMIT_EXCEEDED with
 * `retry_after_ms`, a repeated transaction id answered with the event it already made).
 */
/** An `m.room.message` as the room got it. */
export interface MatrixEvent {
  roomId: string;
  txnId: string;
  eventId: string;
  content: { msgtype: string; body: string; format?: string; formatted_body?: string };
}

/**
 * A homeserver: the access token as `Authorization: Bearer`, rooms it knows by id and alias, and
 * transaction ids remembered per token, as the spec asks. `loseAnswers(n)`: the next n sends are
 * made and then never answered, as when a connection drops.
 */
export async function startMatrixReceiver(
  token: string,
  rooms: Record<string, string>,
): Promise<ProviderReceiver<MatrixEvent> & { loseAnswers(n: number): void }> {
  const txns = new Map<string, string>();
  let lose = 0;
  const error = (status: number, errcode: string, message: string) => json(status, { errcode, error: message });
  const receiver = await provider<MatrixEvent>(
    (r, accept, refuse) => {
      const path = new URL(r.path, 'http://x').pathname;
      const alias = /^\/_matrix\/client\/v3\/directory\/room\/([^/]+)$/.exec(path);
      if (alias && r.method === 'GET') {
        const id = rooms[decodeURIComponent(alias[1])];
        if (!id) return refuse(`alias ${alias[1]}`, error(404, 'M_NOT_FOUND', `Room alias ${decodeURIComponent(alias[1])} not found.`));
        return json(200, { room_id: id, servers: ['example.org'] });
      }
      const send = /^\/_matrix\/client\/v3\/rooms\/([^/]+)\/send\/([^/]+)\/([^/]+)$/.exec(path);
      if (!send || r.method !== 'PUT') return refuse(`${r.method} ${r.path}`, error(404, 'M_UNRECOGNIZED', 'Unrecognized request'));
      if (!r.headers.authorization) return refuse('no token', error(401, 'M_MISSING_TOKEN', 'Missing access token'));
      if (r.headers.authorization !== `Bearer ${token}`) return refuse('token', error(401, 'M_UNKNOWN_TOKEN', 'Unknown access token'));
      const [roomId, type, txnId] = send.slice(1).map(decodeURIComponent);
      if (!Object.values(rooms).includes(roomId)) return refuse(`room ${roomId}`, error(403, 'M_FORBIDDEN', 'You are not in this room.'));
      if (type !== 'm.room.message') return refuse(`type ${type}`, error(400, 'M_BAD_JSON', 'unexpected event type'));
      const seen = txns.get(txnId);
      if (seen) return json(200, { event_id: seen });
      let content: MatrixEvent['content'];
      try {
        content = JSON.parse(r.body);
      } catch {
        return refuse('json', error(400, 'M_NOT_JSON', 'Content not JSON.'));
      }
      if (!['m.text', 'm.notice'].includes(content.msgtype) || typeof content.body !== 'string' || content.body === '')
        return refuse('content', error(400, 'M_BAD_JSON', 'msgtype and body are required'));
      if (content.format !== undefined && (content.format !== 'org.matrix.custom.html' || typeof content.formatted_body !== 'string'))
        return refuse('format', error(400, 'M_BAD_JSON', 'formatted_body goes with format org.matrix.custom.html'));
      const eventId = `$${randomUUID()}:example.org`;
      txns.set(txnId, eventId);
      accept({ roomId, txnId, eventId, content });
      if (lose > 0) {
        lose--;
        return { status: 0 };
      }
      return json(200, { event_id: eventId });
    },
    // Synapse sends the wait in the body only.
    (seconds) => json(429, { errcode: 'M_LIMIT_EXCEEDED', error: 'Too many requests', retry_after_ms: seconds * 1000 }),
  );
  return Object.assign(receiver, { loseAnswers: (n: number) => (lose += n) });
}
