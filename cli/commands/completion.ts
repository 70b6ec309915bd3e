import type { Command } from 'commander';
import { ExitCode, MonctlError } from '../../src/errors.ts';
import { valuesOf } from './completion-values.ts';

/**
 * `monctl completion bash|zsh|fish`: scripts generated from the command tree
 * itself (every noun loaded), so they never drift from the commands.
 */
interface Node {
  name: string;
  about: string;
  options: string[];
  /** Values offered after an option (completion-values.ts), by its long name. */
  values: Record<string, readonly string[]>;
  children: Node[];
}

function tree(cmd: Command): Node {
  return {
    name: cmd.name(),
    about: cmd.description().replace(/\s+/g, ' '),
    options: cmd.options.flatMap((o) => [o.long, o.short].filter((x): x is string => Boolean(x))),
    values: Object.fromEntries(cmd.options.flatMap((o) => (valuesOf(o) && o.long ? [[o.long, valuesOf(o)!]] : []))),
    children: cmd.commands.filter((c) => c.name() !== 'help').map(tree),
  };
}

function bash(root: Node): string {
  const cases = root.children.map((n) => `    ${n.name}) words="${[...n.children.map((c) => c.name), ...n.options].join(' ')}";;`);
  const valued = root.children.flatMap((n) =>
    n.children.flatMap((c) => Object.entries(c.values).map(([o, v]) => `      "${n.name} ${c.name} ${o}") words="${v.join(' ')}";;`)),
  );
  const deep = root.children.flatMap((n) =>
    n.children.map((c) => `    "${n.name} ${c.name}") words="${c.options.join(' ')} --server --context --ca-file --no-color";;`),
  );
  return `# monctl bash completion: eval "$(monctl completion bash)"
_monctl() {
  local cur=\${COMP_WORDS[COMP_CWORD]} words
  local noun=\${COMP_WORDS[1]} verb=\${COMP_WORDS[2]}
  if [ "$COMP_CWORD" -eq 1 ]; then
    words="${[...root.children.map((n) => n.name), ...root.options].join(' ')}"
  elif [ "$COMP_CWORD" -eq 2 ]; then
    case "$noun" in
${cases.join('\n')}
    esac
  else
    case "$noun $verb \${COMP_WORDS[COMP_CWORD-1]}" in
${valued.join('\n')}
      *) case "$noun $verb" in
${deep.join('\n')}
      esac;;
    esac
  fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _monctl monctl
`;
}

const q = (s: string) => s.replace(/'/g, "'\\''").replace(/:/g, '\\:');

function zsh(root: Node): string {
  const nouns = root.children.map((n) => `'${n.name}:${q(n.about)}'`).join(' ');
  const verbs = root.children
    .filter((n) => n.children.length)
    .map((n) => `    ${n.name}) compadd -- ${n.children.map((c) => c.name).join(' ')} ;;`);
  return `#compdef monctl
# monctl zsh completion: monctl completion zsh > "\${fpath[1]}/_monctl"
_monctl() {
  local -a nouns
  nouns=(${nouns})
  if (( CURRENT == 2 )); then
    _describe 'command' nouns
  elif (( CURRENT == 3 )); then
    case $words[2] in
${verbs.join('\n')}
    esac
  else
    _files
  fi
}
compdef _monctl monctl
`;
}

function fish(root: Node): string {
  const lines = ['# monctl fish completion: monctl completion fish > ~/.config/fish/completions/monctl.fish', 'complete -c monctl -f'];
  for (const n of root.children) {
    lines.push(`complete -c monctl -n '__fish_use_subcommand' -a '${n.name}' -d '${n.about.replace(/'/g, "\\'")}'`);
    for (const c of n.children) {
      lines.push(`complete -c monctl -n '__fish_seen_subcommand_from ${n.name}' -a '${c.name}' -d '${c.about.replace(/'/g, "\\'")}'`);
      for (const [o, v] of Object.entries(c.values))
        lines.push(
          `complete -c monctl -n '__fish_seen_subcommand_from ${n.name}; and __fish_seen_subcommand_from ${c.name}' -l '${o.slice(2)}' -xa '${v.join(' ')}'`,
        );
    }
  }
  for (const o of root.options) if (o.startsWith('--')) lines.push(`complete -c monctl -l '${o.slice(2)}'`);
  return `${lines.join('\n')}\n`;
}

/** Registers every noun the program lacks: handed in by the noun table (cli/nouns.ts), which loads this module, so that this module does not import it. */
export type LoadEveryNoun = (program: Command) => Promise<void>;

export function register(program: Command, loadEveryNoun: LoadEveryNoun): void {
  program
    .command('completion')
    .description('shell completion script: bash, zsh or fish')
    .argument('<shell>', 'bash, zsh or fish')
    .action(async (shell: string) => {
      const make = { bash, zsh, fish }[shell];
      if (!make) throw new MonctlError('usage', `no completion for "${shell}" (bash, zsh or fish)`, ExitCode.usage);
      // Completion needs every noun: load the rest of the table into this program.
      await loadEveryNoun(program);
      process.stdout.write(make(tree(program)));
    });
}
