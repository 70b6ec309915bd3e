import { readFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { brotliCompressSync } from 'node:zlib';
import { build, type BuildOptions, type Plugin } from 'esbuild';

export const ROOT = resolve(import.meta.dirname, '..');
export const DIST = join(ROOT, 'dist');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; engines: { node: string } };
export const VERSION = pkg.version;

/**
 * Node's built-ins through require(), never their ES module facade. The
 * facade copies every export once, getters included, and `node:http`'s lazy
 * getters (WebSocket and its events) load undici, with crypto, http2 and
 * zlib: 15 MB of RSS in a process that never uses them (the agent's idle RSS
 * is mostly that). Named imports still work through esbuild's CommonJS interop.
 */
const builtinsByRequire: Plugin = {
  name: 'builtins-by-require',
  setup(b) {
    // Its own require() is the real one (external), not itself again.
    b.onResolve({ filter: /^[a-z_:/]+$/ }, (args) => {
      if (!isBuiltin(args.path)) return undefined;
      return args.namespace === 'builtin' ? { path: args.path, external: true } : { path: args.path, namespace: 'builtin' };
    });
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/**
 * For the agent alone: what its dependencies load at start-up but the agent
 * never runs. Each built-in loaded costs RSS (its compiled code, and the pages
 * of the node binary its source sits in), and the agent's budget is tight.
 * - pino's transports (lib/transport.js: thread-stream, a worker thread,
 *   node:module, node:url): the agent only logs JSON to stdout. A transport
 *   asked for anyway throws.
 * - node:worker_threads, of which pino reads only `isMainThread` (for
 *   asynchronous destinations): the agent runs on the main thread.
 * - node:child_process (commander: executable subcommands, which the agent has
 *   none of) and node:assert (sonic-boom's argument checks): loaded on first
 *   use, through a proxy.
 */
const agentDiet: Plugin = {
  name: 'agent-diet',
  setup(b) {
    const ns = 'agent-diet';
    b.onResolve({ filter: /^\.\/(lib\/)?transport$/ }, (args) =>
      /[\\/]pino[\\/]/.test(args.importer) ? { path: 'pino-transport', namespace: ns } : undefined,
    );
    b.onResolve({ filter: /^(node:)?worker_threads$/ }, (args) =>
      /[\\/]pino[\\/]lib[\\/]tools\.js$/.test(args.importer) ? { path: 'worker_threads', namespace: ns } : undefined,
    );
    b.onResolve({ filter: /^(node:)?(child_process|assert)$/ }, (args) =>
      args.namespace === ns ? undefined : { path: args.path.replace(/^node:/, ''), namespace: ns },
    );
    b.onLoad({ filter: /.*/, namespace: ns }, ({ path }) => {
      if (path === 'pino-transport')
        return {
          contents: "module.exports = () => { throw new Error('pino transports are not part of the monctl agent'); };",
          loader: 'js',
        };
      if (path === 'worker_threads') return { contents: 'module.exports = { isMainThread: true };', loader: 'js' };
      // A function target, so that `assert(…)` calls through too.
      const lazy = `let m; const load = () => (m ??= require(${JSON.stringify(path)}));
module.exports = new Proxy(function () {}, { get: (_, k) => load()[k], apply: (_, self, args) => Reflect.apply(load(), self, args) });`;
      return { contents: lazy, loader: 'js' };
    });
  },
};

/**
 * undici for the agent's probe code: its dispatcher (Agent, connector,
 * redirect interceptor) and request API, without the package's entry module,
 * which also loads fetch, WebSocket, EventSource, caches and mocks: about 5 MB
 * less RSS once checks run. The probe code calls `dispatcher.request()`
 * (src/probes/request.ts), so nothing else is needed.
 */
const undiciDispatcherOnly: Plugin = {
  name: 'undici-dispatcher-only',
  setup(b) {
    b.onResolve({ filter: /^undici$/ }, () => ({ path: 'undici', namespace: 'undici-dispatcher-only' }));
    b.onLoad({ filter: /.*/, namespace: 'undici-dispatcher-only' }, () => ({
      resolveDir: ROOT,
      loader: 'js',
      contents: `const Dispatcher = require('undici/lib/dispatcher/dispatcher');
Object.assign(Dispatcher.prototype, require('undici/lib/api'));
module.exports = {
  Dispatcher,
  Agent: require('undici/lib/dispatcher/agent'),
  buildConnector: require('undici/lib/core/connect'),
  interceptors: { redirect: require('undici/lib/interceptor/redirect') },
};`,
    }));
  },
};

/**
 * The agent's probe code (src/probes/runner.ts and undici with it, issue 19)
 * goes into the agent bundle as text, compiled on the first remote check. As
 * code in the bundle it cost 4 MB of idle RSS, remote checks or not (V8 reads
 * and pre-parses every function of a script at start-up); as text it is
 * 0.6 MB, brotli-compressed 0.1 MB (node:zlib loads with the first check). It
 * is bundled on its own (CommonJS, Node's built-ins by require), so it shares
 * no module with the rest of the agent.
 */
const lazyProbes: Plugin = {
  name: 'lazy-probes',
  setup(b) {
    b.onResolve({ filter: /[\\/]src[\\/]probes[\\/]runner\.ts$/ }, (args) =>
      args.kind === 'dynamic-import' && /[\\/]cli[\\/]agent[\\/]probes\.ts$/.test(args.importer)
        ? { path: resolve(dirname(args.importer), args.path), namespace: 'lazy-probes' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-probes' }, async ({ path }) => ({
      contents: await asCompressedText(path, [undiciDispatcherOnly, lazyProtocolClients, builtinsByRequire]),
      loader: 'js',
    }));
  },
};

/**
 * Inside the agent's probe code, the clients that only GRPC and WEBSOCKET checks use (grpc-js,
 * ws; imported dynamically by their probes) are compressed text of their own, compiled on the
 * first check of their type rather than with the first remote check of any type.
 */
const lazyProtocolClients: Plugin = {
  name: 'lazy-protocol-clients',
  setup(b) {
    b.onResolve({ filter: /^(@grpc\/grpc-js|ws)$/ }, (args) =>
      args.kind === 'dynamic-import'
        ? { path: createRequire(args.importer).resolve(args.path), namespace: 'lazy-protocol-clients' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-protocol-clients' }, async ({ path }) => ({
      contents: await asCompressedText(path, [builtinsByRequire]),
      loader: 'js',
    }));
  },
};

/** A CommonJS module that compiles `entry`'s bundle, kept brotli-compressed as text, when it is first required. */
async function asCompressedText(entry: string, plugins: Plugin[]): Promise<string> {
  const inner = await build({ ...common, entryPoints: [entry], format: 'cjs', write: false, minify: true, keepNames: true, plugins });
  const packed = brotliCompressSync(inner.outputFiles![0].contents).toString('base64');
  return `const code = process.getBuiltinModule('node:zlib').brotliDecompressSync(Buffer.from(${JSON.stringify(packed)}, 'base64')).toString('utf8');
const m = { exports: {} };
new Function('module', 'exports', 'require', code)(m, m.exports, process.getBuiltinModule);
module.exports = m.exports;`;
}

/**
 * What every bundle shares. The target is the oldest Node the package
 * supports (package.json engines); JSX from .tsx files compiles with React's
 * automatic runtime, as tsconfig says.
 */
const common: BuildOptions = {
  bundle: true,
  platform: 'node',
  target: `node${/\d+/.exec(pkg.engines.node)![0]}`,
  jsx: 'automatic',
  // The version is compiled in: the single executable has no package.json to read.
  define: { MONCTL_BUILD_VERSION: JSON.stringify(VERSION) },
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [builtinsByRequire],
};

/**
 * CommonJS dependencies call require() for Node's built-ins and some read
 * __filename (write-file-atomic hashes it into temp names): an ES module has
 * neither, so each output file gets its own.
 */
const requireShim = [
  "import { createRequire as __monctlRequire } from 'node:module';",
  "import { fileURLToPath as __monctlPath } from 'node:url';",
  'const require = __monctlRequire(import.meta.url);',
  'const __filename = __monctlPath(import.meta.url);',
  "const __dirname = __filename.slice(0, __filename.lastIndexOf('/'));",
].join(' ');

/**
 * `dist/monctl.js`: the CLI, the daemon and the agent. Code splitting keeps
 * each noun and the daemon in their own chunks, loaded on demand as in
 * development, so a CLI call does not parse the daemon.
 * - better-sqlite3: a native addon, installed as a dependency.
 * - react-devtools-core: Ink imports it only when DEV=true.
 * - pg-native: pg's optional libpq binding, loaded only if `pg.native` is
 *   read (monctl never does); pg itself (pure JavaScript) is bundled.
 */
export function bundleMain(outdir = DIST) {
  return build({
    ...common,
    entryPoints: { monctl: join(ROOT, 'bin/monctl.ts') },
    outdir,
    format: 'esm',
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    external: ['better-sqlite3', 'react-devtools-core', 'pg-native'],
    banner: { js: requireShim },
    minifySyntax: true,
    minifyWhitespace: true,
    keepNames: true,
  });
}

/**
 * The agent alone, with every dependency inside: `dist/agent.mjs` (ESM, for
 * `node dist/agent.mjs`) or CommonJS for the single executable, which on Node
 * 24 runs only a CommonJS main script.
 */
export function bundleAgent(format: 'esm' | 'cjs', outfile: string) {
  return build({
    ...common,
    entryPoints: [join(ROOT, 'cli/agent/main.ts')],
    outfile,
    format,
    // Everything but Node's built-ins is inside, so process.getBuiltinModule serves as require():
    // no createRequire(import.meta.url) and its path resolutions at start-up.
    ...(format === 'esm' ? { banner: { js: '#!/usr/bin/env node\nconst require = process.getBuiltinModule;' } } : {}),
    minify: true,
    keepNames: true,
    plugins: [agentDiet, lazyProbes, builtinsByRequire],
  });
}
