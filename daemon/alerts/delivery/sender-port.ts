import type { OutgoingMessage, SendOutcome } from '../types.ts';

/** A notifier ready to send, as the notifiers capability loads it (secrets opened). */
export interface LoadedSender {
  notifier: { id: number; name: string; type: string; enabled: boolean };
  send(message: OutgoingMessage, signal: AbortSignal): Promise<SendOutcome>;
}

/** Loads a notifier's sender; undefined when the notifier no longer exists. */
export type SenderLoader = (notifierId: number) => Promise<LoadedSender | undefined>;
