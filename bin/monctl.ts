/**
 * The single executable. `monctl daemon` loads the server; every other command
 * loads the CLI, which never imports daemon code (it speaks HTTP through src/).
 *
 * Built, this file is dist/monctl.js and may meet any Node: it checks the
 * version before loading anything that an older Node could not run.
 */
const MIN_NODE = [22, 19]; // tls.setDefaultCACertificates (--ca-file)
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < MIN_NODE[0] || (major === MIN_NODE[0] && minor < MIN_NODE[1])) {
  process.stderr.write(
    `monctl needs Node.js ${MIN_NODE.join('.')} or newer; this is Node.js ${process.versions.node} (${process.execPath}).\n`,
  );
  // Loaded here only: every other start does without it.
  process.exit((await import('../src/errors.ts')).ExitCode.error);
}

const [command] = process.argv.slice(2);

if (command === 'daemon') {
  const { runDaemonCommand } = await import('../daemon/command.ts');
  await runDaemonCommand(process.argv.slice(3));
} else {
  // The CLI starts cold on every call: V8's on-disk code cache. bin/monctl already sets
  // NODE_COMPILE_CACHE (covering this file too); this covers `node bin/monctl.ts` run directly.
  // Not when it is set: loading node:module would cost the cold start for nothing.
  if (!process.env.NODE_COMPILE_CACHE) process.getBuiltinModule('node:module').enableCompileCache?.();
  const { runCli } = await import('../cli/main.ts');
  await runCli(process.argv);
}
