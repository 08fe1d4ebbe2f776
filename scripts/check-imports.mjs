#!/usr/bin/env node
// The layout's rules, checked on the imports of src/: no import circle, and no import from a room to one it may not
// use (a lower layer reaching up, or a door or connector reaching past the core into the store). The console
// (console/src/, a browser build) may import src/domain/ and nothing else of ours outside its folder.
//
//   node scripts/check-imports.mjs [--root DIR]     (run by `npm test` before the typecheck)
//
// Every import between files of src/ counts, type-only and dynamic ones included: a type import that runs up is the
// same design fault as a value import, even when it costs nothing at run time.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The rooms of src/, matched in this order by path (a folder ends with `/`), each with the rooms it may import. The
 * layers, from the bottom: domain ← store ← core ← connectors, doors, workers ← app ← cli, main.ts.
 */
export const ROOMS = [
  { room: 'domain', paths: ['domain/'], may: [] },
  // Leaves any part may use: the version, where a node keeps its files, what a log must never show.
  { room: 'basics', paths: ['version.ts', 'data-directory.ts', 'log-redaction.ts'], may: [] },
  { room: 'store', paths: ['store/'], may: ['domain', 'basics'] },
  // Counters and gauges; the core's services carry them to the doors.
  { room: 'metrics', paths: ['metrics.ts'], may: [] },
  { room: 'core', paths: ['core/'], may: ['domain', 'store', 'metrics', 'basics'] },
  // The SMPP codec, shared by the server door and the client connector.
  { room: 'protocols', paths: ['protocols/'], may: ['domain', 'basics'] },
  // Audio: the text-to-speech engine behind the core's port, and the WAV format the SIP connector plays.
  { room: 'speech', paths: ['speech/'], may: ['domain', 'core', 'basics'] },
  { room: 'connectors', paths: ['connectors/'], may: ['domain', 'core', 'protocols', 'speech', 'basics'] },
  { room: 'workers', paths: ['workers/'], may: ['domain', 'core', 'basics'] },
  { room: 'doors', paths: ['doors/'], may: ['domain', 'core', 'metrics', 'protocols', 'workers', 'basics'] },
  { room: 'config', paths: ['config/'], may: ['domain', 'basics'] },
  {
    room: 'app',
    paths: ['app/', 'secret-key.ts', 'startup-report.ts', 'log-format.ts', 'keys-file.ts'],
    may: ['domain', 'store', 'metrics', 'core', 'protocols', 'speech', 'connectors', 'workers', 'doors', 'config', 'basics'],
  },
  {
    room: 'cli',
    paths: ['cli/'],
    may: ['domain', 'store', 'metrics', 'core', 'protocols', 'speech', 'connectors', 'workers', 'doors', 'config', 'app', 'basics'],
  },
  { room: 'main', paths: ['main.ts'], may: ['cli'] },
];

/**
 * Packages of this repository (its workspaces) and the rooms that may import them: the SDK is a client of the REST
 * API, the CLI's way in; the server itself never goes through it.
 */
export const WORKSPACE_PACKAGES = [{ name: '@tern/sdk', may: ['cli'] }];

const SOURCE = /\.(ts|tsx|mts|js|mjs)$/;
// `import … from '…'`, `export … from '…'`, `import '…'` (a statement's start, over several lines), and `import('…')`.
const STATIC_IMPORT = /^[ \t]*(?:import\s+(?:[^'"`;]*?[\s}]from\s*)?|export\s+(?:type\s+)?[*{][^'"`;]*?[\s}]from\s*)['"]([^'"\n]+)['"]/gm;
const DYNAMIC_IMPORT = /\bimport\(\s*['"]([^'"\n]+)['"]\s*\)/g;

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return SOURCE.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The specifiers a file imports: relative ones, or with `packages` the others (packages, `node:` modules). */
export function importsOf(text, packages = false) {
  const found = new Set();
  for (const pattern of [STATIC_IMPORT, DYNAMIC_IMPORT]) {
    for (const m of text.matchAll(pattern)) if (m[1].startsWith('.') !== packages) found.add(m[1]);
  }
  return [...found];
}

function roomOf(path) {
  return ROOMS.find((r) => r.paths.some((p) => (p.endsWith('/') ? path.startsWith(p) : path === p)));
}

/** Strongly connected components of more than one file, or a file importing itself (Tarjan's algorithm). */
function circles(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  let next = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)?.has(v)) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** Checks the tree under `root` (its src/); returns the problems found, one line each, and what was read. */
export function checkImports(root) {
  const src = join(root, 'src');
  const problems = [];
  const graph = new Map();
  let imports = 0;
  for (const file of sourceFiles(src).sort()) {
    const from = relative(src, file).split(sep).join('/');
    const fromRoom = roomOf(from);
    if (!fromRoom) problems.push(`src/${from}: in no room; add its path to ROOMS in scripts/check-imports.mjs`);
    const edges = new Set();
    graph.set(from, edges);
    const text = readFileSync(file, 'utf8');
    for (const specifier of importsOf(text, true)) {
      const own = WORKSPACE_PACKAGES.find((p) => specifier === p.name || specifier.startsWith(`${p.name}/`));
      if (own && !own.may.includes(fromRoom?.room)) problems.push(`src/${from}: imports ${specifier}, which only ${own.may.join(', ')} may import`);
    }
    for (const specifier of importsOf(text)) {
      const target = resolve(dirname(file), specifier);
      if (!existsSync(target) || !statSync(target).isFile()) {
        problems.push(`src/${from}: imports ${specifier}, which is no file`);
        continue;
      }
      const to = relative(src, target).split(sep).join('/');
      if (to.startsWith('..')) {
        problems.push(`src/${from}: imports ${specifier}, outside src/`);
        continue;
      }
      imports++;
      edges.add(to);
      const toRoom = roomOf(to);
      if (!fromRoom || !toRoom || fromRoom === toRoom) continue;
      if (!fromRoom.may.includes(toRoom.room)) {
        const may = fromRoom.may.length > 0 ? fromRoom.may.join(', ') : 'nothing of ours';
        problems.push(`src/${from} -> src/${to}: ${fromRoom.room} may not import ${toRoom.room} (it may import ${may})`);
      }
    }
  }
  for (const component of circles(graph)) problems.push(`import circle: ${component.map((f) => `src/${f}`).join(', ')}`);
  return { problems, files: graph.size, imports, console: checkConsole(root, problems) };
}

/**
 * The console is a browser build of its own: of src/ it may import only the pure rules (domain/ imports nothing of
 * ours, so nothing of the server's comes along). Returns how many such imports it has.
 */
function checkConsole(root, problems) {
  const dir = resolve(root, 'console', 'src');
  if (!existsSync(dir)) return 0;
  const domain = resolve(root, 'src', 'domain') + sep;
  let shared = 0;
  for (const file of sourceFiles(dir).sort()) {
    const from = relative(root, file).split(sep).join('/');
    for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
      const target = resolve(dirname(file), specifier);
      if (!relative(dir, target).startsWith('..')) continue;
      if (target.startsWith(domain) && existsSync(target)) shared++;
      else problems.push(`${from}: imports ${specifier}; of what lies outside console/src/, the console may import only src/domain/`);
    }
  }
  return shared;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const at = process.argv.indexOf('--root');
  const root = at >= 0 ? process.argv[at + 1] : '.';
  const { problems, files, imports, console: shared } = checkImports(root);
  if (problems.length > 0) {
    for (const p of problems) console.error(p);
    console.error(`imports: ${problems.length} problem(s) in ${files} files of src/`);
    process.exit(1);
  }
  console.log(
    `imports: ${files} files of src/, ${imports} imports between them: no circle, none against the layers; console/src/: ${shared} import(s) of src/domain/, none of anything else outside it`,
  );
}
