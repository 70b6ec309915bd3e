import type { Command } from 'commander';
import { ALERT_EVENT_KINDS } from '../../src/api/kinds.ts';
import { ExitCode, MonctlError, usage } from '../../src/errors.ts';
import { ops } from '../api/ops.ts';
import { act, type Runtime, withOutput } from '../runtime.ts';
import { offerValues } from './completion-values.ts';
import { templateOf } from './notifier-input.ts';

type EventKind = (typeof ALERT_EVENT_KINDS)[number];

/** `--event incident-opened` as the API spells it; a usage error naming the kinds otherwise. */
function eventOf(text: string | undefined): EventKind | undefined {
  if (text === undefined) return undefined;
  const kind = text.toUpperCase().replaceAll('-', '_');
  if (!(ALERT_EVENT_KINDS as readonly string[]).includes(kind))
    usage(`--event must be one of ${ALERT_EVENT_KINDS.join(', ')}, not "${text}"`);
  return kind as EventKind;
}

const EVENT_HELP = `a sample alert of this kind, through the templates: ${ALERT_EVENT_KINDS.join(', ')}`;

/**
 * `notifiers test NAME [--event KIND]` (sends, exit 1 when not delivered) and
 * `notifiers preview NAME` (renders what the channel would receive, sends nothing;
 * exit 1 when a template failed and the default message was rendered instead).
 */
export function registerTestAndPreview(notifiers: Command, notifierId: (rt: Runtime, ref: string) => Promise<number>): void {
  const test = withOutput(
    notifiers.command('test').description('send a test message now; exit 1 when it was not delivered').argument('<notifier>', 'id or name'),
  )
    .option('--event <kind>', EVENT_HELP)
    .action(
      act(async (rt, ref: string, f: { event?: string }) => {
        const event = eventOf(f.event);
        const id = await notifierId(rt, ref);
        const result = await rt.client.call(ops.testNotifier, { params: { id }, ...(event ? { body: { event } } : {}) });
        if (rt.structured) {
          await rt.show(result);
          if (!result.ok) process.exitCode = ExitCode.error;
          return;
        }
        const how = `${result.statusCode !== null ? `status ${result.statusCode}, ` : ''}${result.latencyMs} ms`;
        if (result.note) rt.info(`Note: ${result.note}`);
        const what = event ? `a sample ${event}` : 'a test message';
        if (result.ok) return void process.stdout.write(`Delivered ${what} to ${ref} (${how}).\n`);
        throw new MonctlError(
          'delivery-failed',
          `${what === 'a test message' ? 'the test message' : what} to ${ref} was not delivered: ${result.error} (${how}; ` +
            `${result.retryable ? 'a real notification would be retried' : 'a real notification would not be retried'})`,
        );
      }),
    );

  const preview = withOutput(
    notifiers
      .command('preview')
      .description('render a sample message as the channel would receive it, without sending; exit 1 when a template failed')
      .argument('<notifier>', 'id or name'),
  )
    .option('--event <kind>', `${EVENT_HELP} (default: the plain test message)`)
    .option('--title-template <text>', 'try this title template (or @FILE) instead of the notifier’s')
    .option('--body-template <text>', 'try this body template (or @FILE) instead of the notifier’s')
    .action(
      act(async (rt, ref: string, f: { event?: string; titleTemplate?: string; bodyTemplate?: string }) => {
        const event = eventOf(f.event);
        const titleTemplate = templateOf('--title-template', f.titleTemplate, false);
        const bodyTemplate = templateOf('--body-template', f.bodyTemplate, false);
        const body = {
          ...(event ? { event } : {}),
          ...(titleTemplate ? { titleTemplate } : {}),
          ...(bodyTemplate ? { bodyTemplate } : {}),
        };
        const id = await notifierId(rt, ref);
        const preview = await rt.client.call(ops.previewNotifier, { params: { id }, ...(Object.keys(body).length ? { body } : {}) });
        if (rt.structured) await rt.show(preview);
        else process.stdout.write(`${preview.title}\n\n${preview.body}${preview.body.endsWith('\n') ? '' : '\n'}`);
        if (preview.templateError !== null) {
          if (!rt.structured) rt.info(`The template failed, so this is the default message: ${preview.templateError}`);
          process.exitCode = ExitCode.error;
        }
      }),
    );
  for (const c of [test, preview]) offerValues(c, '--event', ALERT_EVENT_KINDS);
}
