import { Liquid, type Template, Tag, type TagToken, type TopLevelToken } from 'liquidjs';
import { badRequest, type FieldError } from '../../../src/errors.ts';
import type { NotifierType } from '../../../src/notifier-fields.ts';
import type { OutgoingMessage } from '../types.ts';
import { escapeFor } from './escapes.ts';
import { type RenderedMessage, renderMessage } from './render.ts';
import { templateScope } from './template-vars.ts';

/**
 * A notifier's title and body templates (docs/API.md#message-templates), in LiquidJS: a
 * template reads the variables of template-vars.ts and nothing else. No file is ever read
 * (`include`, `render` and `layout` are refused when parsed, and the engine looks templates up
 * in an empty in-memory map, never on disk), an unknown filter is an error rather than skipped,
 * and only own properties of the variables are visible. Every printed value goes through the
 * channel's `escape`; `raw` does not turn that off. A render is bounded in time and in what it
 * may allocate, so a template that loops over too much fails (and the default message is sent)
 * instead of holding the daemon.
 */
export const TEMPLATE_LIMITS = {
  /** Two templates of at most 8 KiB each (the schema's limit) are parsed one at a time. */
  parseLimit: 8192,
  /** ms of one render: a real template takes well under one. */
  renderLimit: 50,
  /** Liquid's allocation units (range elements, characters of joined and appended strings). */
  memoryLimit: 1_000_000,
} as const;

/** What a rendered title or body may be: more is a template error, not a truncated message. */
export const MAX_TITLE_CHARS = 1024;
export const MAX_BODY_CHARS = 32_768;

/** `{% include %}`, `{% render %}` and `{% layout %}` read other templates from files: a parse error here. */
class NoFiles extends Tag {
  constructor(token: TagToken, remain: TopLevelToken[], liquid: Liquid) {
    super(token, remain, liquid);
    throw new Error(`{% ${token.name} %} is not available: templates cannot read files`);
  }
  *render(): Generator<unknown, void, unknown> {}
}

const engines = new Map<NotifierType | 'parse', Liquid>();

/** One engine per notifier type, whose output escape is that type's (engines are cheap and there are 13 types). */
function engineFor(type: NotifierType | 'parse'): Liquid {
  let liquid = engines.get(type);
  if (liquid) return liquid;
  const escape = type === 'parse' ? (s: string) => s : escapeFor(type);
  liquid = new Liquid({
    ...TEMPLATE_LIMITS,
    templates: {},
    relativeReference: false,
    dynamicPartials: false,
    strictFilters: true,
    ownPropertyOnly: true,
    outputEscape: (value: unknown) => escape(printable(value)),
  });
  for (const tag of ['include', 'render', 'layout']) liquid.registerTag(tag, NoFiles);
  // Liquid's `raw` filter turns the output escape off: here it is a filter like any other.
  liquid.registerFilter('raw', (value: unknown) => value);
  engines.set(type, liquid);
  return liquid;
}

/** How a value prints: nothing for null, lists and objects as JSON (not `[object Object]`). */
function printable(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const reason = (err: unknown) => (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim().slice(0, 500);

/** Liquid's message when `source` does not parse, else undefined. */
export function parseProblem(source: string): string | undefined {
  if (!source.trim()) return 'is empty (send null to remove it)';
  try {
    engineFor('parse').parse(source);
    return undefined;
  } catch (err) {
    return reason(err);
  }
}

/** A 400 naming `titleTemplate` or `bodyTemplate` when one given does not parse (create, PATCH). */
export function checkTemplates(body: { titleTemplate?: string | null; bodyTemplate?: string | null }): void {
  const errors: FieldError[] = [];
  for (const field of ['titleTemplate', 'bodyTemplate'] as const) {
    const source = body[field];
    const problem = typeof source === 'string' ? parseProblem(source) : undefined;
    if (problem) errors.push({ field, message: problem });
  }
  if (errors.length) throw badRequest(`Invalid template: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`, errors);
}

export interface TemplatedNotifier {
  name: string;
  type: NotifierType;
  titleTemplate: string | null;
  bodyTemplate: string | null;
}

/**
 * The message as notifier `n` sends it: the default rendering, then its templates over it. With a
 * template, `markup` is true and both title and text are in the channel's format (the one not
 * templated is the default, escaped). A template that fails leaves the default message and says
 * why in `templateError` (`bodyTemplate: undefined filter: nope, line:1, col:4`). Never throws.
 */
export async function renderWithTemplates(
  n: TemplatedNotifier,
  message: OutgoingMessage,
  opts: { publicUrl: string | null; now?: number },
): Promise<{ rendered: RenderedMessage; templateError: string | null }> {
  const now = opts.now ?? Date.now();
  const rendered = renderMessage(message, { publicUrl: opts.publicUrl, now, notifierName: n.name });
  if (n.titleTemplate === null && n.bodyTemplate === null) return { rendered, templateError: null };
  const escape = escapeFor(n.type);
  const scope = templateScope(message, rendered, n, { now, publicUrl: opts.publicUrl });
  let field = 'titleTemplate';
  try {
    const title = n.titleTemplate === null ? escape(rendered.title) : await run(n.type, n.titleTemplate, scope, MAX_TITLE_CHARS, true);
    field = 'bodyTemplate';
    const text = n.bodyTemplate === null ? escape(rendered.text) : await run(n.type, n.bodyTemplate, scope, MAX_BODY_CHARS, false);
    return { rendered: { ...rendered, title, text, markup: true }, templateError: null };
  } catch (err) {
    return { rendered, templateError: `${field}: ${reason(err)}` };
  }
}

/** The delivery log's note for a template that failed. */
export const templateNote = (templateError: string) => `template error: ${templateError}; sent the default message`;

async function run(type: NotifierType, source: string, scope: object, max: number, oneLine: boolean): Promise<string> {
  const liquid = engineFor(type);
  const template: Template[] = liquid.parse(source);
  let out = String(await liquid.render(template, scope)).trim();
  // A title is one line wherever it goes (an email subject, a card's heading).
  if (oneLine) out = out.replace(/\s*[\r\n]+\s*/g, ' ');
  if (!out) throw new Error('rendered nothing');
  if (out.length > max) throw new Error(`rendered ${out.length} characters, more than ${max}`);
  return out;
}
