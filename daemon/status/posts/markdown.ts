import { Marked } from 'marked';
import { MAX_MESSAGE_BYTES } from '../../../src/api/schemas/status-incidents.ts';
import { invalidField } from '../../../src/errors.ts';
import { sanitizeAnnouncement } from '../../monitoring/sanitize.ts';

/** Our own instance: marked's global options are process-wide, and nothing else should change ours. */
const marked = new Marked({ gfm: true, breaks: false, async: false });

/**
 * A posted message as the page shows it: Markdown to HTML, then the announcements'
 * sanitiser (daemon/monitoring/sanitize.ts), so raw HTML inside the Markdown
 * (scripts, handlers, `javascript:` links) goes exactly as it would in an announcement.
 * 64 KiB of UTF-8 at most, as sent (the schema caps characters; `field` names it in the 400).
 */
export function renderMessage(markdown: string, field = 'message'): string {
  if (Buffer.byteLength(markdown, 'utf8') > MAX_MESSAGE_BYTES) throw invalidField(field, `must be at most ${MAX_MESSAGE_BYTES} bytes`);
  return sanitizeAnnouncement(marked.parse(markdown) as string);
}
