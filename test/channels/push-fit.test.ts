import { describe, expect, it } from 'vitest';
import { escapeMarkdownV2, fitMarkdownV2 } from '../../daemon/alerts/notifiers/channels/telegram.ts';
import { escapeHtml, fitHtml } from '../../daemon/alerts/notifiers/channels/pushover.ts';
import { parseMarkdownV2 } from './telegram-receiver.ts';

/** The channels' limits: a long message is cut to what the provider takes, never inside an escape or an entity. */
describe('TELEGRAM: 4096 characters after entities parsing', () => {
  it('keeps a message that fits as it is', () => {
    const text = `*${escapeMarkdownV2('DOWN: a.b')}*\n${escapeMarkdownV2('x.'.repeat(2000))}`;
    expect(fitMarkdownV2(text)).toBe(text);
  });

  it.each([0, 1])('cuts a longer one between escapes (offset %i), which Telegram still parses', (offset) => {
    const text = `*DOWN*\n${'a'.repeat(offset)}${escapeMarkdownV2('.!_'.repeat(3000))}`;
    const fitted = fitMarkdownV2(text);
    const parsed = parseMarkdownV2(fitted);
    expect(parsed).not.toHaveProperty('error');
    const { shown } = parsed as { shown: string };
    expect(shown.length).toBeLessThanOrEqual(4096);
    expect(shown.length).toBeGreaterThan(4090);
    expect(shown.endsWith('…')).toBe(true);
  });

  it('never splits a surrogate pair', () => {
    const fitted = fitMarkdownV2(`x${'🚨'.repeat(3000)}`);
    expect(fitted).toMatch(/^x(?:🚨)+…$/u);
    expect(fitted.length).toBeLessThanOrEqual(4096);
  });
});

describe('PUSHOVER: 1024 characters of HTML', () => {
  it('cuts between entities', () => {
    const fitted = fitHtml(escapeHtml('<&>'.repeat(1000)), 1024);
    expect([...fitted].length).toBeLessThanOrEqual(1024);
    expect(fitted).toMatch(/^(?:&lt;|&amp;|&gt;)+…$/);
  });
});
