import type { Command } from 'commander';
import type { Static } from '@sinclair/typebox';
import type { TwoFactorStatus } from '../../src/api/schemas/two-factor.ts';
import { ops } from '../api/ops.ts';
import { printQr } from '../auth/terminal-qr.ts';
import { readSecret } from '../io/prompt.ts';
import type { View } from '../output/render.ts';
import { act, type Runtime, withOutput } from '../runtime.ts';

type S = Static<typeof TwoFactorStatus>;
const yesNo = (b: boolean) => (b ? 'yes' : 'no');
const view: View<S> = {
  columns: [
    { header: 'ENABLED', get: (s) => yesNo(s.enabled) },
    { header: 'PENDING ENROLMENT', get: (s) => yesNo(s.pending) },
    { header: 'REQUIRED', get: (s) => yesNo(s.required) },
    { header: 'RECOVERY CODES LEFT', get: (s) => s.recoveryCodesLeft },
    { header: 'CAN ENROL', get: (s) => yesNo(s.canEnrol) },
  ],
};

/** The codes on stdout, one a line (a script can keep them), the advice on stderr. */
async function showCodes(rt: Runtime, codes: string[]): Promise<void> {
  if (rt.structured) return rt.show({ recoveryCodes: codes });
  rt.info('Recovery codes, shown this once; each works once in place of a code:');
  process.stdout.write(`${codes.join('\n')}\n`);
}

const askCode = () => readSecret('Authentication code (or a recovery code)');

export function register(program: Command): void {
  const tf = program.command('two-factor').description("your own TOTP second factor for password logins (the context's user)");

  withOutput(tf.command('status').description('whether a second factor is on, required, and how many recovery codes are left')).action(
    act(async (rt) => rt.show(await rt.client.call(ops.getTwoFactor), view)),
  );

  withOutput(
    tf
      .command('enable')
      .description('enrol: prints a QR code and the secret for an authenticator app, asks a code of it, prints the recovery codes'),
  ).action(
    act(async (rt) => {
      const enrolment = await rt.client.call(ops.enrolTwoFactor, { body: {} });
      rt.info('Scan this with an authenticator app, or type the secret into it:');
      // In json/yaml, stdout is for the codes alone.
      const out = rt.structured ? process.stderr : process.stdout;
      await printQr(enrolment.otpauthUri, out);
      out.write(`Secret: ${enrolment.secret}\n`);
      const code = await readSecret('Authentication code');
      const { recoveryCodes } = await rt.client.call(ops.confirmTwoFactor, { body: { code } });
      rt.info('Two-factor login is on: password logins now ask for a code.');
      await showCodes(rt, recoveryCodes);
    }),
  );

  withOutput(tf.command('disable').description('turn the second factor off (asks a current code or a recovery code)')).action(
    act(async (rt) => {
      const status = await rt.client.call(ops.disableTwoFactor, { body: { code: await askCode() } });
      await rt.done(status, 'Two-factor login is off.');
    }),
  );

  withOutput(
    tf.command('recovery-codes').description('replace the recovery codes with 10 new ones (asks a current code or a recovery code)'),
  ).action(
    act(async (rt) => showCodes(rt, (await rt.client.call(ops.renewRecoveryCodes, { body: { code: await askCode() } })).recoveryCodes)),
  );
}
