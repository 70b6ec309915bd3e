import './live-terminal.ts';
import { render } from 'ink';
import React from 'react';

/**
 * Runs a full-screen Ink app until it exits; an error reported by the app
 * (stream refused, route gone) is rethrown for the CLI's error boundary.
 */
export async function runInk(make: (onFatal: (err: Error) => void) => { type: React.FunctionComponent<any>; props: Record<string, unknown> }): Promise<void> {
  let fatal: Error | undefined;
  const { type, props } = make((err) => (fatal = err));
  const app = render(React.createElement(type, props), { exitOnCtrlC: true });
  await app.waitUntilExit();
  if (fatal) throw fatal;
}
