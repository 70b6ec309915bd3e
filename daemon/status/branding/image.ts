import sanitizeHtml from 'sanitize-html';
import { HttpError } from '../../../src/errors.ts';

export const ASSET_KINDS = ['logo', 'favicon'] as const;
export type AssetKind = (typeof ASSET_KINDS)[number];

/** Enough for a crisp logo (a 600×200 PNG is ~30 KiB) and far more than a favicon needs; both ride on every page view. */
export const ASSET_MAX_BYTES: Record<AssetKind, number> = { logo: 256 * 1024, favicon: 64 * 1024 };

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const SVG_NS = 'http://www.w3.org/2000/svg';

const unsupported = (detail: string) => new HttpError(415, 'unsupported-media-type', detail);

/**
 * SVG's drawing elements and presentation attributes, nothing else: no
 * script, foreignObject (HTML inside), style elements, animation (`set`
 * can write `href`), image or feImage (they fetch), and no event handlers.
 * References must stay inside the file (`#id`).
 */
const TAGS = `
  svg g defs symbol use title desc path rect circle ellipse line polyline polygon text tspan textPath
  linearGradient radialGradient stop clipPath mask pattern marker filter feGaussianBlur feOffset feBlend
  feColorMatrix feFlood feComposite feMerge feMergeNode
`
  .trim()
  .split(/\s+/);
const ATTRIBUTES = `
  xmlns xmlns:xlink version id class viewBox preserveAspectRatio width height x y x1 y1 x2 y2 cx cy r rx ry fx
  fy d points pathLength transform fill fill-opacity fill-rule clip-rule stroke stroke-width stroke-opacity
  stroke-linecap stroke-linejoin stroke-miterlimit stroke-dasharray stroke-dashoffset opacity color clip-path
  mask filter offset stop-color stop-opacity gradientUnits gradientTransform spreadMethod patternUnits
  patternTransform clipPathUnits maskUnits markerWidth markerHeight refX refY orient marker-start marker-mid
  marker-end font-family font-size font-weight font-style text-anchor dominant-baseline letter-spacing dx dy
  stdDeviation in in2 result mode type values operator k1 k2 k3 k4 flood-color flood-opacity href xlink:href
  role aria-label aria-hidden visibility display
`
  .trim()
  .split(/\s+/);
/** Attribute values that point outside the file: `url(…)` other than `url(#id)`. */
const OUTSIDE_URL = /url\(\s*['"]?\s*(?!#)/i;

const SVG_OPTIONS: sanitizeHtml.IOptions = {
  parser: { xmlMode: true, lowerCaseTags: false, lowerCaseAttributeNames: false, recognizeSelfClosing: true },
  allowedTags: TAGS,
  allowedAttributes: { '*': ATTRIBUTES },
  allowedSchemes: [],
  allowedSchemesAppliedToAttributes: ['href', 'xlink:href'],
  allowProtocolRelative: false,
  selfClosing: TAGS.filter((t) => !['svg', 'g', 'defs', 'symbol', 'title', 'desc', 'text', 'tspan', 'textPath'].includes(t)),
  disallowedTagsMode: 'discard',
  // Their text is not drawing: it goes with them.
  nonTextTags: ['script', 'style', 'foreignObject', 'noscript', 'iframe'],
  transformTags: {
    '*': (tagName, attribs) => {
      const kept: Record<string, string> = {};
      for (const [name, value] of Object.entries(attribs)) {
        if ((name === 'href' || name === 'xlink:href') && !value.trim().startsWith('#')) continue;
        if (OUTSIDE_URL.test(value)) continue;
        kept[name] = value;
      }
      if (tagName === 'svg' && !kept.xmlns) kept.xmlns = SVG_NS;
      return { tagName, attribs: kept };
    },
  },
};

/** The SVG drawn, without anything that runs or fetches; 415 when it is no SVG document. */
export function sanitiseSvg(bytes: Buffer): Buffer {
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  // An SVG document: optional XML declaration, comments and doctype, then the <svg> root.
  if (!/^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*|<!DOCTYPE[^>]*>\s*)*<svg[\s>]/.test(text)) {
    throw unsupported('The body is not an SVG document (it must start with <svg>, after an optional XML declaration)');
  }
  const clean = sanitizeHtml(text, SVG_OPTIONS).trim();
  if (!clean.startsWith('<svg')) throw unsupported('The SVG document has no <svg> root left once sanitised');
  return Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>\n${clean}`, 'utf8');
}

type ImageType = 'image/png' | 'image/svg+xml';

/** The declared type of an upload, checked before a byte is read: 415 unless PNG or SVG. */
export function uploadType(contentType: string | undefined): ImageType {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'image/png' || type === 'image/svg+xml') return type;
  throw unsupported('The image must be image/png or image/svg+xml');
}

/**
 * An uploaded image as stored: PNG by its magic bytes, SVG sanitised. The
 * declared type and the bytes must agree (415 otherwise): a PNG declared SVG
 * or HTML declared PNG is refused, never guessed at.
 */
export function acceptImage(type: ImageType, bytes: Buffer): { contentType: ImageType; bytes: Buffer } {
  if (type === 'image/svg+xml') return { contentType: type, bytes: sanitiseSvg(bytes) };
  if (!bytes.subarray(0, 8).equals(PNG_MAGIC)) throw unsupported('The body is not a PNG image (its signature is missing)');
  return { contentType: type, bytes };
}
