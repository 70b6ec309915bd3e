/**
 * The single executable. `monctl daemon` loads the server; every other command
 * loads the CLI, which never imports daemon code (it speaks HTTP through src/).
 */
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
