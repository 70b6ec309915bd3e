import './live-terminal.ts';
import { render } from 'ink';
import type { FunctionComponent } from 'react';
import { createScreen } from './screen.tsx';

/** The terminal's alternate screen: the view starts at the top, and the shell's screen is back on exit (as with less or top). */
const ENTER_ALT = '\u001b[?1049h\u001b[H';
const LEAVE_ALT = '\u001b[?1049l';

/**
 * Runs a full-screen Ink app until it exits; an error reported by the app
 * (stream refused, route gone) is rethrown for the CLI's error boundary.
 * A resize re-lays the whole screen out (see `createScreen`).
 */
export async function runInk(
  make: (onFatal: (err: Error) => void) => { type: FunctionComponent<any>; props: Record<string, unknown> },
): Promise<void> {
  let fatal: Error | undefined;
  const { type: View, props } = make((err) => (fatal = err));
  const { Screen, onRender } = createScreen();
  process.stdout.write(ENTER_ALT);
  const app = render(
    <Screen>
      <View {...props} />
    </Screen>,
    { exitOnCtrlC: true, onRender },
  );
  // Killed rather than quit: still hand the shell its screen back.
  const signals = ['SIGTERM', 'SIGHUP'] as const;
  const killed = (signal: NodeJS.Signals) => {
    app.unmount();
    process.stdout.write(LEAVE_ALT);
    process.exit(128 + (signal === 'SIGTERM' ? 15 : 1));
  };
  for (const s of signals) process.once(s, killed);
  try {
    await app.waitUntilExit();
  } finally {
    for (const s of signals) process.off(s, killed);
    process.stdout.write(LEAVE_ALT);
  }
  if (fatal) throw fatal;
}
