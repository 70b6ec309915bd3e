import type { Bus, BusEvents } from '../bus.ts';
import type { PodMessages } from './pod-messages.ts';

/** Resource ids per message: a NOTIFY payload holds under 8,000 bytes. */
const IDS_PER_MESSAGE = 500;
const RELAYED = ['resource.changed', 'resource.deleted', 'push.pinged'] as const satisfies ReadonlyArray<keyof BusEvents>;

/**
 * Makes the bus's resource events cluster-wide: what the API of one pod
 * emits reaches the bus of every pod (the scheduler of the pod that owns the
 * resource reschedules it; read caches drop their entries). Ids emitted in
 * one tick travel together (a bulk `apply`).
 */
export function relayBus(bus: Bus, messages: PodMessages): () => void {
  let remote = false;
  const pending = new Map<string, Set<number>>();
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    for (const [event, ids] of pending) {
      const list = [...ids];
      for (let i = 0; i < list.length; i += IDS_PER_MESSAGE) messages.send('bus', { event, ids: list.slice(i, i + IDS_PER_MESSAGE) });
    }
    pending.clear();
  };
  const offs = RELAYED.map((event) => {
    const local = ({ id }: { id: number }) => {
      if (remote) return; // delivered from another pod: not sent back
      let ids = pending.get(event);
      if (!ids) pending.set(event, (ids = new Set()));
      ids.add(id);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    };
    bus.on(event, local);
    return () => bus.off(event, local);
  });
  const unsubscribe = messages.on('bus', ({ event, ids }: { event: (typeof RELAYED)[number]; ids: number[] }) => {
    if (!RELAYED.includes(event)) return;
    remote = true;
    try {
      for (const id of ids) bus.emit(event, { id });
    } finally {
      remote = false;
    }
  });
  return () => {
    offs.forEach((off) => off());
    unsubscribe();
  };
}
