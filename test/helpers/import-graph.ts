/**
 * The relative-import graph of the source tree, for test/architecture.test.ts: circles, imports
 * against the dependency order. Pure functions over (file, source) pairs, so the test
 * can feed them planted sources and show that they fail.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ROOT } from './daemon.ts';

/** Every relative import specifier of a source file (static, dynamic, re-export, type-only). */
export function importsOf(source: string): string[] {
  const found: string[] = [];
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"]([^'"]+)['"]/g;
  for (const match of source.matchAll(pattern)) found.push(match[1]);
  return found;
}

/** Source files under `dir` (absolute paths), recursively. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else if (/\.(ts|tsx|js|mjs)$/.test(name)) out.push(path);
  }
  return out;
}

/** file → the files it imports, both as paths relative to `root`; only relative specifiers count. */
export type ImportGraph = Map<string, string[]>;

/** Builds the graph of `files` (absolute paths) as `read` sees them. */
export function importGraph(files: string[], read = (f: string) => readFileSync(f, 'utf8'), root = ROOT): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of files) {
    const targets = importsOf(read(file))
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => relative(root, resolve(dirname(file), spec)));
    graph.set(relative(root, file), [...new Set(targets)]);
  }
  return graph;
}

/** The import circles: strongly connected components of more than one file (or a file importing itself), each as one closed path. */
export function circles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!graph.has(to)) continue;
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) components.push(component);
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components.map((component) => closedPath(graph, new Set(component)));
}

/** A shortest path from the component's first file (sorted) back to itself, readable in a failure message. */
function closedPath(graph: ImportGraph, members: Set<string>): string[] {
  const start = [...members].sort()[0];
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const to of graph.get(node) ?? []) {
      if (!members.has(to)) continue;
      if (to === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0])!);
        return [...path, start];
      }
      if (!cameFrom.has(to)) {
        cameFrom.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start, start];
}

/**
 * The dependency order, bottom first: each layer is a list of path prefixes (folders or files, relative
 * to the root; the longest prefix places a file). A file may import anything in a lower layer and its own
 * folder within its own layer; nothing in a higher layer, and no other folder of its own layer.
 */
export type Layers = string[][];

/** Where a file sits: its layer's index and the prefix that placed it there, or undefined when no prefix matches. */
export function placeOf(file: string, layers: Layers): { layer: number; unit: string } | undefined {
  let best: { layer: number; unit: string } | undefined;
  layers.forEach((units, layer) => {
    for (const unit of units) {
      const matches = file === unit || file.startsWith(`${unit}/`) || file.replace(/\.tsx?$/, '') === unit;
      if (matches && (!best || unit.length > best.unit.length)) best = { layer, unit };
    }
  });
  return best;
}

/** `daemon/auth/keys.ts` → `daemon/auth`; a top-level file is its own folder. */
const folderOf = (file: string) => file.split('/').slice(0, 2).join('/');

/** Imports that do not point down: into a higher layer, or sideways into another unit of the same layer. */
export function upwardImports(graph: ImportGraph, layers: Layers): string[] {
  const bad: string[] = [];
  for (const [file, targets] of graph) {
    const from = placeOf(file, layers);
    if (!from) continue;
    for (const target of targets) {
      const to = placeOf(target, layers);
      if (!to || to.layer < from.layer) continue;
      if (to.layer === from.layer && (to.unit === from.unit || folderOf(target) === folderOf(file))) continue;
      bad.push(`${file} -> ${target}`);
    }
  }
  return bad.sort();
}

/** Files of `graph` that no layer places, so a new folder cannot slip past the order. */
export function unplaced(graph: ImportGraph, layers: Layers, under: string[]): string[] {
  return [...graph.keys()].filter((file) => under.some((top) => file.startsWith(`${top}/`)) && !placeOf(file, layers)).sort();
}
