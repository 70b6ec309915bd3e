import type { Static } from '@sinclair/typebox';
import type { Announcement } from '../../src/api/schemas/announcements.ts';

/** What apply wraps an announcement's content in (cli/apply/plan.ts): its name in the file. */
export const APPLY_MARK = /^<div class="monctl-apply monctl-name-([A-Za-z0-9_-]+) monctl-hash-([0-9a-f]+)">([\s\S]*)<\/div>$/;

/**
 * One `announcements:` entry: the name apply gave it and the content inside apply's wrapper. One
 * written another way (the web UI, the CLI) has no name: it is `announcement-ID`, which apply
 * matches to that announcement (cli/apply/plan.ts), so the file manages it from then on.
 */
export function announcementEntry(a: Static<typeof Announcement>) {
  const m = APPLY_MARK.exec(a.content);
  return {
    name: m ? m[1] : `announcement-${a.id}`,
    kind: a.kind,
    content: m ? m[3] : a.content,
    active: a.active,
    activeUntil: a.activeUntil,
  };
}
