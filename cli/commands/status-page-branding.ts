import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Static } from '@sinclair/typebox';
import type { StatusPagePatch } from '../../src/api/schemas/status-pages.ts';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import type { Runtime } from '../runtime.ts';

type Patch = Static<typeof StatusPagePatch>;
const ASSETS = ['logo', 'favicon'] as const;

/** Commander's names for the branding flags: `--no-x` sets `x` to false. */
export interface BrandingFlags {
  accentColor?: string | false;
  headerLink?: string | false;
  headerLinkText?: string;
  logo?: string | false;
  favicon?: string | false;
}

export function withBrandingFlags(cmd: Command, update: boolean): Command {
  cmd
    .option('--accent-color <#rrggbb>', 'accent colour: links and the header link (refused below the WCAG AA contrast ratio)')
    .option('--header-link <url>', 'a link in the header (http or https), to your site say')
    .option('--header-link-text <text>', "the header link's text (default: the URL)")
    .option('--logo <file>', 'logo image, PNG or SVG (at most 256 KiB; SVG is sanitised)')
    .option('--favicon <file>', 'favicon, PNG or SVG (at most 64 KiB)');
  if (update) {
    cmd
      .option('--no-accent-color', 'back to the default colours')
      .option('--no-header-link', 'remove the header link')
      .option('--no-logo', 'remove the logo')
      .option('--no-favicon', 'back to the default favicon');
  }
  return cmd;
}

/** The JSON fields of the branding flags (the images go separately: see uploadAssets). */
export function brandingBody(f: BrandingFlags, current?: { headerLink: { url: string; text: string } | null }): Patch {
  const body: Patch = {};
  if (f.accentColor !== undefined) body.accentColor = f.accentColor === false ? null : f.accentColor;
  if (f.headerLink === false) {
    if (f.headerLinkText !== undefined)
      throw new MonctlError('usage', 'give --header-link-text or --no-header-link, not both', ExitCode.usage);
    body.headerLink = null;
  } else if (f.headerLink !== undefined || f.headerLinkText !== undefined) {
    // The text alone changes the current link's text.
    const url = f.headerLink ?? current?.headerLink?.url;
    if (!url) throw new MonctlError('usage', '--header-link-text needs --header-link URL', ExitCode.usage);
    body.headerLink = { url, text: f.headerLinkText ?? (f.headerLink === undefined ? current?.headerLink?.text : undefined) ?? url };
  }
  return body;
}

const FLAG_KEYS = ['accentColor', 'headerLink', 'headerLinkText', ...ASSETS] as const;
export const hasBrandingFlags = (f: BrandingFlags) => FLAG_KEYS.some((k) => f[k] !== undefined);
export const needsCurrentLink = (f: BrandingFlags) => f.headerLinkText !== undefined && f.headerLink === undefined;

/** The type of an image file: PNG by its signature, else SVG by its name or an opening `<`. */
function imageFile(file: string, flag: string): { bytes: Buffer; type: string } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw new MonctlError(
      'usage',
      `${flag} ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      ExitCode.usage,
    );
  }
  if (bytes.subarray(0, 4).toString('latin1') === '\x89PNG') return { bytes, type: 'image/png' };
  if (
    /\.svg$/i.test(file) ||
    /^\s*</.test(
      bytes
        .subarray(0, 256)
        .toString('utf8')
        .replace(/^\uFEFF/, ''),
    )
  )
    return { bytes, type: 'image/svg+xml' };
  throw new MonctlError('usage', `${flag} ${file}: not a PNG or SVG image`, ExitCode.usage);
}

type ImageFile = { kind: (typeof ASSETS)[number]; bytes: Buffer; type: string };

/** The images the flags name, read before anything is sent: a bad file changes nothing. */
export function readAssets(f: BrandingFlags): ImageFile[] {
  return ASSETS.filter((k) => typeof f[k] === 'string').map((k) => ({ kind: k, ...imageFile(f[k] as string, `--${k}`) }));
}

/** Uploads the images read, and removes those the flags say to (`--no-logo`). */
export async function uploadAssets(rt: Runtime, id: number, f: BrandingFlags, files: ImageFile[]): Promise<void> {
  for (const { kind, bytes, type } of files) {
    await rt.client.raw('PUT', `/admin/api/status-pages/${id}/${kind}`, bytes, { 'content-type': type });
  }
  for (const kind of ASSETS.filter((k) => f[k] === false)) {
    // Removing what is not there is no error: the page ends as asked.
    await rt.client.raw('DELETE', `/admin/api/status-pages/${id}/${kind}`).catch((err: MonctlError) => {
      if (err.exitCode !== ExitCode.notFound) throw err;
    });
  }
}
