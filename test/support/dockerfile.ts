// A Dockerfile read as the builder reads it, for what the tests check: its stages and their instructions (comments,
// line continuations and exec forms), ARG defaults in FROM, ENV pairs.

export interface Instruction {
  /** Upper case: FROM, RUN, ENV, … */
  keyword: string;
  /** Everything after the keyword, continuation lines joined. */
  args: string;
  line: number;
}

export interface Stage {
  /** The image it starts from, ARG defaults substituted. */
  from: string;
  name: string | null;
  instructions: Instruction[];
}

export interface Dockerfile {
  /** ARG instructions before the first FROM, with their defaults. */
  globalArgs: Record<string, string>;
  stages: Stage[];
}

export function parseInstructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = text.split(/\r?\n/);
  let current: { text: string; line: number } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const trimmed = line.trim();
    // Comments and blank lines, also between continuation lines (where the builder drops them too).
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const continued = /\\\s*$/.test(line);
    const piece = continued ? line.replace(/\\\s*$/, '') : line;
    if (current === null) current = { text: piece.trimStart(), line: i + 1 };
    else current.text += piece;
    if (!continued) {
      const m = /^(\S+)\s*(.*)$/s.exec(current.text)!;
      out.push({ keyword: m[1]!.toUpperCase(), args: m[2]!.trim(), line: current.line });
      current = null;
    }
  }
  if (current !== null) throw new Error(`line ${current.line}: a continuation that never ends`);
  return out;
}

export function parseDockerfile(text: string): Dockerfile {
  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const ins of parseInstructions(text)) {
    if (ins.keyword === 'FROM') {
      const m = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      if (!m) throw new Error(`line ${ins.line}: FROM ${ins.args}`);
      const from = m[1]!.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a: string | undefined, b: string | undefined) => globalArgs[(a ?? b)!] ?? '');
      stages.push({ from, name: m[2] ?? null, instructions: [] });
    } else if (stages.length === 0) {
      if (ins.keyword !== 'ARG') throw new Error(`line ${ins.line}: ${ins.keyword} before the first FROM`);
      const [name, value] = ins.args.split('=', 2);
      globalArgs[name!] = value ?? '';
    } else {
      stages.at(-1)!.instructions.push(ins);
    }
  }
  return { globalArgs, stages };
}

/** The exec (JSON array) form of CMD, ENTRYPOINT, RUN or a HEALTHCHECK's CMD; null for the shell form. */
export function execForm(args: string): string[] | null {
  if (!args.startsWith('[')) return null;
  try {
    const parsed: unknown = JSON.parse(args);
    return Array.isArray(parsed) && parsed.every((a) => typeof a === 'string') ? parsed : null;
  } catch {
    // Not JSON: the builder runs it through a shell.
    return null;
  }
}

/** The pairs of `ENV a=b c="d e"` (and the old `ENV a b` form). */
export function envPairs(args: string): Record<string, string> {
  if (!/^\S+=/.test(args)) {
    const m = /^(\S+)\s+(.*)$/s.exec(args);
    if (!m) throw new Error(`ENV ${args}`);
    return { [m[1]!]: m[2]! };
  }
  const out: Record<string, string> = {};
  for (const m of args.matchAll(/(\w+)=("(?:[^"\\]|\\.)*"|\S*)/g)) {
    const raw = m[2]!;
    out[m[1]!] = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw;
  }
  return out;
}

/** A HEALTHCHECK's options and command: `--interval=15s … CMD [...]`, or NONE. */
export function healthcheck(args: string): { options: Record<string, string>; command: string[] | null } | 'NONE' {
  if (args.trim().toUpperCase() === 'NONE') return 'NONE';
  const options: Record<string, string> = {};
  let rest = args;
  for (let m = /^--([\w-]+)=(\S+)\s+/.exec(rest); m; m = /^--([\w-]+)=(\S+)\s+/.exec(rest)) {
    options[m[1]!] = m[2]!;
    rest = rest.slice(m[0].length);
  }
  const cmd = /^CMD\s+(.*)$/is.exec(rest);
  if (!cmd) throw new Error(`HEALTHCHECK ${args}`);
  return { options, command: execForm(cmd[1]!.trim()) };
}
