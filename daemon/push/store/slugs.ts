import { type Kysely, sql, type Transaction } from 'kysely';
import { SLUG_RE } from '../../../src/api/schemas/push.ts';
import { conflict, invalidField } from '../../../src/errors.ts';
import type { Database } from '../../store/schema.ts';

type Db = Kysely<Database> | Transaction<Database>;

const MAX_SLUG = 100;

/**
 * A slug from a resource's name (docs/DECISIONS.md#push-resources): lower-case, every run of
 * characters a slug cannot hold becomes one `-`, no `-` or `_` at either end, at most 100.
 * A name with no letter or digit at all gives `push`.
 */
export function slugFromName(name: string): string {
  const slug = trimEnds(
    name
      .toLowerCase()
      .replace(/[^a-z0-9_-]+/g, '-')
      .slice(0, MAX_SLUG),
  );
  return slug === '' ? 'push' : slug;
}

const trimEnds = (s: string) => s.replace(/^[-_]+|[-_]+$/g, '');

/** 400 naming `target` unless it is a slug (lower-case letters, digits, `-` and `_`, at most 100). */
export function checkSlug(slug: string): void {
  if (!SLUG_RE.test(slug)) {
    throw invalidField(
      'target',
      'a PUSH target is a slug: lower-case letters, digits, - and _, starting and ending with a letter or digit, at most 100',
    );
  }
}

/** 409 naming `target` when another push check has this slug. */
export async function checkSlugFree(db: Db, slug: string, exceptId?: number): Promise<void> {
  let query = db.selectFrom('push_checks').select('resource_id').where('slug', '=', slug);
  if (exceptId !== undefined) query = query.where('resource_id', '!=', exceptId);
  if (await query.executeTakeFirst()) throw conflict(`A push check with the slug ${slug} exists`, 'target');
}

/**
 * `base` if no push check has it, else the first free `base-2`, `base-3`…, the base cut so that
 * the whole stays within 100. One query reads the taken slugs that share the base's first 90
 * characters (every candidate does, but for a base cut at a run of `-`); each pick is confirmed.
 */
export async function freeSlug(db: Db, base: string): Promise<string> {
  const rows = await db
    .selectFrom('push_checks')
    .select('slug')
    .where(sql<boolean>`slug like ${`${likePrefix(base.slice(0, 90))}%`} escape '\\'`)
    .execute();
  const taken = new Set(rows.map((r) => r.slug));
  for (;;) {
    const slug = firstFree(base, taken, MAX_SLUG);
    if (!(await db.selectFrom('push_checks').select('resource_id').where('slug', '=', slug).executeTakeFirst())) return slug;
    taken.add(slug);
  }
}

/** The first of `base`, `base-2`, `base-3`… not in `taken`, cut to `max` characters. */
export function firstFree(base: string, taken: ReadonlySet<string>, max: number): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = `${trimEnds(base.slice(0, max - suffix.length))}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** `text` for a LIKE pattern escaped with a backslash: slugs hold `_`, which LIKE reads as any character. */
function likePrefix(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
