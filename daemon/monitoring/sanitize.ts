import sanitizeHtml from 'sanitize-html';

/**
 * The safe HTML subset announcements are stored in: sanitize-html's default
 * block and inline tags plus images, links limited to http(s) and mailto,
 * no scripts, styles, event handlers or `javascript:` URLs. Disallowed tags are
 * dropped with their text kept, except script/style whose content goes too.
 */
const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img'],
  allowedAttributes: {
    a: ['href', 'name', 'target', 'rel', 'title'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    '*': ['class'],
  },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  // Links that open a new tab must not hand the opener over to the target.
  transformTags: {
    a: (tagName, attribs) =>
      attribs.target === '_blank' ? { tagName, attribs: { ...attribs, rel: 'noopener noreferrer' } } : { tagName, attribs },
  },
};

export function sanitizeAnnouncement(html: string): string {
  return sanitizeHtml(html, OPTIONS);
}
