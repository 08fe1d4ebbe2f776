/**
 * `tern completion bash|zsh|fish`: a completion script made from the command tree itself, so that it offers exactly
 * the commands and options `tern --help` lists. Each shell's script finds the command typed so far (the words that
 * name a command, options and their values skipped) and offers that command's subcommands and options.
 */
import type { Command } from 'commander';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** A command of the tree: its path from the root (`campaign send`), its description, subcommands and options. */
interface Node {
  path: string;
  description: string;
  subcommands: Node[];
  options: Array<{ flag: string; description: string }>;
}

function nodeOf(cmd: Command, path: string): Node {
  const options = [...cmd.options.map((o) => ({ flag: o.long ?? o.short ?? '', description: o.description })), { flag: '--help', description: 'show help' }];
  return {
    path,
    description: cmd.description(),
    subcommands: cmd.commands.map((c) => nodeOf(c, path === '' ? c.name() : `${path} ${c.name()}`)),
    options: options.filter((o) => o.flag !== ''),
  };
}

function all(node: Node): Node[] {
  return [node, ...node.subcommands.flatMap(all)];
}

const lastWord = (path: string) => path.slice(path.lastIndexOf(' ') + 1);

/** Single-quoted for a POSIX shell or fish: a quote closes, is escaped, and opens again. */
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const fishQuote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function bash(root: Node): string {
  const nodes = all(root);
  const known = nodes.filter((n) => n.path !== '').map((n) => `"${n.path}"`);
  const cases = nodes.map(
    (n) => `    "${n.path}") words=${quote([...n.subcommands.map((c) => lastWord(c.path)), ...n.options.map((o) => o.flag)].join(' '))} ;;`,
  );
  return `# tern completion for bash: source it, or write it to /etc/bash_completion.d/tern
_tern() {
  local cur word path candidate words i
  cur="\${COMP_WORDS[COMP_CWORD]}"
  path=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    [[ "$word" == -* ]] && continue
    candidate="\${path:+$path }$word"
    case "$candidate" in
      ${known.join('|')}) path="$candidate" ;;
    esac
  done
  case "$path" in
${cases.join('\n')}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _tern tern
`;
}

function zsh(root: Node): string {
  // zsh runs the bash script through its bash completion layer: the same tree, the same answers.
  return `#compdef tern
# tern completion for zsh: source it from ~/.zshrc, or put it in a directory of $fpath as _tern
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bash(root)}`;
}

function fish(root: Node): string {
  const nodes = all(root);
  const lines = [
    '# tern completion for fish: write it to ~/.config/fish/completions/tern.fish',
    `set -g __tern_paths ${nodes
      .filter((n) => n.path !== '')
      .map((n) => fishQuote(n.path))
      .join(' ')}`,
    'function __tern_path',
    '    set -l path',
    '    for word in (commandline -opc)[2..-1]',
    "        string match -q -- '-*' $word; and continue",
    "        set -l candidate (string join ' ' $path $word)",
    '        contains -- $candidate $__tern_paths; and set path $path $word',
    '    end',
    "    string join ' ' $path",
    'end',
    'function __tern_at',
    '    set -l path (__tern_path)',
    '    test "$path" = "$argv[1]"',
    'end',
  ];
  for (const n of nodes) {
    const at = `-n ${fishQuote(`__tern_at ${quote(n.path)}`)}`;
    for (const c of n.subcommands) lines.push(`complete -c tern ${at} -a ${fishQuote(lastWord(c.path))} -d ${fishQuote(c.description)}`);
    for (const o of n.options) {
      const flag = o.flag.startsWith('--') ? `-l ${o.flag.slice(2)}` : `-s ${o.flag.slice(1)}`;
      lines.push(`complete -c tern ${at} ${flag} -d ${fishQuote(o.description)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The completion script of `shell` for the program `root`. */
export function completionScript(root: Command, shell: Shell): string {
  const tree = nodeOf(root, '');
  return shell === 'bash' ? bash(tree) : shell === 'zsh' ? zsh(tree) : fish(tree);
}
