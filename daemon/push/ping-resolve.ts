import type { DaemonContext } from '../context.ts';
import type { ParsedPing } from './ping-path.ts';
import { findKeys, findTargets, membership, type PingKeyRow, type PingTarget } from './ping-store.ts';

/** A batch's targets, in order: by uuid, or by key and slug (a group's key reaches its own checks only). */
export async function resolveTargets(
  deps: Pick<DaemonContext, 'db' | 'log'>,
  pings: ParsedPing[],
  create?: (key: PingKeyRow, slug: string) => Promise<void>,
): Promise<Array<PingTarget | undefined>> {
  const refs = pings.map((p) => p.ref);
  const uuids = [...new Set(refs.flatMap((r) => ('uuid' in r ? [r.uuid] : [])))];
  const slugRefs = refs.flatMap((r) => ('key' in r ? [r] : []));
  const keys = await findKeys(deps.db, [...new Set(slugRefs.map((r) => r.key))]);
  const wanted = [...new Set(slugRefs.filter((r) => keys.has(r.key)).map((r) => r.slug))];
  let found = await findTargets(deps.db, uuids, wanted);
  const missing = pings.filter((p) => 'key' in p.ref && p.create && keys.get(p.ref.key)?.allowCreate && !found.bySlug.has(p.ref.slug));
  if (create && missing.length > 0) {
    const made = new Set<string>();
    for (const p of missing) {
      const ref = p.ref as { key: string; slug: string };
      if (made.has(ref.slug)) continue;
      made.add(ref.slug);
      // One that cannot be made (a name or slug taken meanwhile, by another pod) stays a 404: the batch goes on.
      await create(keys.get(ref.key)!, ref.slug).catch((err: unknown) => deps.log.debug({ err, slug: ref.slug }, 'push: ?create=1 failed'));
    }
    found = await findTargets(deps.db, uuids, wanted);
  }
  const groupKeyed = slugRefs.filter((r) => keys.get(r.key)?.groupId != null && found.bySlug.has(r.slug));
  const members = await membership(
    deps.db,
    groupKeyed.map((r) => found.bySlug.get(r.slug)!.resourceId),
  );
  return refs.map((ref) => {
    if ('uuid' in ref) return found.byUuid.get(ref.uuid);
    const key = keys.get(ref.key);
    const target = key && found.bySlug.get(ref.slug);
    if (!key || !target) return undefined;
    return key.groupId === null || members.has(`${target.resourceId}:${key.groupId}`) ? target : undefined;
  });
}
