// The links of Markdown documents, and whether they lead somewhere: a relative link must name a file or folder that
// exists, and its anchor a heading of the Markdown document it names (or of its own document), as GitHub renders them.
import { dirname, join, normalize } from 'node:path';

export interface Link {
  /** The target as written: `docs/x.md#anchor`, `#anchor`, `https://…`. */
  target: string;
  /** 1-based line of the document it is on. */
  line: number;
}

/** What a link check needs of the files around the documents: paths are relative to the root, with `/`. */
export interface Files {
  exists(path: string): boolean;
  /** A Markdown file's text, or null when there is none. */
  read(path: string): string | null;
}

/** The lines of a document outside fenced code blocks (``` or ~~~), each with its 1-based number. */
function proseLines(markdown: string): Array<{ text: string; line: number }> {
  const out: Array<{ text: string; line: number }> = [];
  let fence: string | null = null;
  markdown.split('\n').forEach((text, i) => {
    const opening = /^\s{0,3}(`{3,}|~{3,})/.exec(text);
    if (opening) {
      const marker = opening[1]!;
      if (fence === null) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = null;
      return;
    }
    if (fence === null) out.push({ text, line: i + 1 });
  });
  return out;
}

/** A line with its code spans blanked out (what they hold is text, not Markdown). */
function withoutCodeSpans(text: string): string {
  return text.replace(/(`+)(?:(?!\1).)*?\1/g, (span) => ' '.repeat(span.length));
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces made hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text stays, its target goes
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a document offers: its headings' slugs (a repeated one gets `-1`, `-2`…) and explicit ids. */
export function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (heading) {
      const base = slug(heading[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      found.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(m[1]!);
  }
  return found;
}

/** Every link and image of a document, outside code: inline ones and reference definitions. */
export function links(markdown: string): Link[] {
  const out: Link[] = [];
  for (const { text, line } of proseLines(markdown)) {
    const prose = withoutCodeSpans(text);
    for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ target: m[1]!, line });
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(prose);
    if (definition) out.push({ target: definition[1]!, line });
  }
  return out;
}

/** Whether a target leaves the repository (a scheme: `https:`, `mailto:`). */
function external(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}

/**
 * What is wrong with the links of `documents` (paths relative to the root → their text): one line per link that
 * leads nowhere, naming the document, its line and why. Links out of the repository are not followed.
 */
export function brokenLinks(documents: ReadonlyMap<string, string>, files: Files): string[] {
  const problems: string[] = [];
  const anchorsOf = new Map<string, Set<string> | null>();
  const anchorsIn = (path: string): Set<string> | null => {
    if (!anchorsOf.has(path)) {
      const text = documents.get(path) ?? files.read(path);
      anchorsOf.set(path, text === null ? null : anchors(text));
    }
    return anchorsOf.get(path)!;
  };
  for (const [document, text] of documents) {
    for (const { target, line } of links(text)) {
      const where = `${document}:${line}: ${target}`;
      if (target === '') {
        problems.push(`${where}: an empty link`);
        continue;
      }
      if (external(target)) continue;
      if (target.startsWith('/')) {
        problems.push(`${where}: an absolute path (write it relative to ${document})`);
        continue;
      }
      const hash = target.indexOf('#');
      const pathPart = hash === -1 ? target : target.slice(0, hash);
      const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
      const path = pathPart === '' ? document : normalize(join(dirname(document), decodeURIComponent(pathPart))).replace(/\\/g, '/');
      if (path.startsWith('..')) {
        problems.push(`${where}: leads out of the repository`);
        continue;
      }
      if (!files.exists(path) && !documents.has(path)) {
        problems.push(`${where}: no such file ${path}`);
        continue;
      }
      if (anchor === null) continue;
      if (!path.endsWith('.md')) {
        problems.push(`${where}: an anchor into ${path}, which is not a Markdown document`);
        continue;
      }
      const offered = anchorsIn(path);
      if (offered === null) problems.push(`${where}: ${path} cannot be read`);
      else if (!offered.has(anchor)) problems.push(`${where}: ${path} has no heading #${anchor}`);
    }
  }
  return problems;
}

/** A document's line count, as an editor shows it (a final line break ends the last line). */
export function lineCount(text: string): number {
  if (text === '') return 0;
  const breaks = text.split('\n').length - 1;
  return text.endsWith('\n') ? breaks : breaks + 1;
}
