import type { Selectable } from 'kysely';
import { invalidField } from '../../../src/errors.ts';
import type { StatusPagesTable } from '../../store/schema.ts';
import { checkAccent } from './contrast.ts';

type Row = Selectable<StatusPagesTable>;
type Columns = Pick<Row, 'accent_color' | 'header_link_url' | 'header_link_text'>;
interface BrandingBody {
  accentColor?: string | null;
  headerLink?: { url: string; text: string } | null;
}

/** http(s) only: the link is on a public page, where `javascript:` or `data:` would run in readers' browsers. */
function linkUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidField('headerLink.url', 'must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidField('headerLink.url', 'must be an http or https URL');
  return url.href;
}

/** The branding columns of a create (`current` absent) or a patch: fields left out keep their value. */
export function brandingColumns(body: BrandingBody, current?: Columns): Columns {
  const accent = body.accentColor === undefined ? (current?.accent_color ?? null) : body.accentColor && checkAccent(body.accentColor);
  if (body.headerLink === undefined)
    return { accent_color: accent, header_link_url: current?.header_link_url ?? null, header_link_text: current?.header_link_text ?? null };
  if (body.headerLink === null) return { accent_color: accent, header_link_url: null, header_link_text: null };
  const text = body.headerLink.text.trim();
  if (!text) throw invalidField('headerLink.text', 'must not be blank');
  return { accent_color: accent, header_link_url: linkUrl(body.headerLink.url), header_link_text: text };
}

/** The branding fields of a StatusPage. */
export function brandingFields(row: Columns) {
  return {
    accentColor: row.accent_color,
    headerLink: row.header_link_url ? { url: row.header_link_url, text: row.header_link_text ?? row.header_link_url } : null,
  };
}
