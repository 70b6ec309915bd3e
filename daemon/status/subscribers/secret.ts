import { boxFor, type SecretBox } from '../../auth/secret-box.ts';

/** The box that seals webhook subscribers' signing secrets (`status_subscribers.secret_enc`); deliveries open it. */
export function subscriberBox(installSecret: Uint8Array): SecretBox {
  return boxFor(installSecret, 'subscriber-secrets');
}
