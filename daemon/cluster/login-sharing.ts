import type { LoginThrottle } from '../auth/login-throttle.ts';
import type { PodMessages } from './pod-messages.ts';

/**
 * Login throttling counts across pods: each failed login (and each success,
 * which clears the count) is told to every other pod, which counts it as its
 * own. A pod started within the window does not know the failures before it;
 * a burst spread over pods within a few milliseconds may pass a couple more
 * attempts than one daemon would.
 */
export function shareLoginThrottle(throttle: LoginThrottle, messages: PodMessages): void {
  throttle.share = {
    failed: (username, at) => messages.send('login.failed', { username, at }),
    succeeded: (username) => messages.send('login.succeeded', { username }),
  };
  messages.on('login.failed', ({ username, at }: { username: string; at: number }) => throttle.fail(username, at, true));
  messages.on('login.succeeded', ({ username }: { username: string }) => throttle.succeed(username, true));
}
