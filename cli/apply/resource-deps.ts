/**
 * Resources' `dependsOn` in an apply file: names, checked whole before any
 * write. Resources are created and updated in an order where each one's
 * dependencies in the file come first, so that a create can name them at
 * once (one step per resource, no second pass); a cycle within the file is
 * refused here, before anything changes (the daemon refuses one through
 * resources the file does not name with a 400 naming `dependsOn`).
 */
type Err = (path: string, msg: string) => void;

/** `dependsOn` as written: a list of names, or undefined when left out (not managed). */
export function validateDependsOn(p: string, name: unknown, value: unknown, err: Err): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length > 50 || value.some((v) => typeof v !== 'string' || v.trim() === '')) {
    err(`${p}.dependsOn`, 'must be a list of at most 50 resource names');
    return undefined;
  }
  if (value.includes(name)) err(`${p}.dependsOn`, 'a resource cannot depend on itself');
  return [...new Set(value as string[])];
}

/**
 * The resources in an order where every dependency named in the file comes before its dependents
 * (depth first, the file's order otherwise); a cycle is an error naming the resources on it.
 */
export function dependencyOrder<R extends { name: string; dependsOn?: string[] }>(resources: R[], err: Err): R[] {
  const byName = new Map(resources.map((r) => [r.name, r]));
  const state = new Map<string, 'visiting' | 'done'>();
  const out: R[] = [];
  const visit = (r: R, path: string[]): void => {
    const seen = state.get(r.name);
    if (seen === 'done') return;
    if (seen === 'visiting') {
      const cycle = [...path.slice(path.indexOf(r.name)), r.name];
      err(`resources[${resources.indexOf(r)}].dependsOn`, `a cycle: ${cycle.join(' -> ')}`);
      return;
    }
    state.set(r.name, 'visiting');
    for (const d of r.dependsOn ?? []) {
      const dep = byName.get(d);
      if (dep) visit(dep, [...path, r.name]);
    }
    state.set(r.name, 'done');
    out.push(r);
  };
  for (const r of resources) visit(r, []);
  return out;
}

/** Dependencies neither in the file nor on the server (with prune: not in the file), as plan errors. */
export function missingDependencies(
  resources: Array<{ name: string; dependsOn?: string[] }>,
  server: Set<string>,
  prune: boolean,
): string[] {
  const inFile = new Set(resources.map((r) => r.name));
  return resources.flatMap((r) =>
    (r.dependsOn ?? [])
      .filter((d) => !inFile.has(d) && (prune || !server.has(d)))
      .map((d) =>
        server.has(d)
          ? `  resources ${r.name}: dependency "${d}" would be pruned (add it to the file)`
          : `  resources ${r.name}: dependency "${d}" is neither in the file nor on the server`,
      ),
  );
}
