// The documents: every relative link and anchor of README.md and docs/ leads somewhere, the README stays a front page
// (its two commands first, under 160 lines) and lists every document of docs/.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { anchors, brokenLinks, type Files, lineCount, links, slug } from './support/markdown-links.ts';

/** The repository's root: the first folder above this file holding Tern's package.json and README.md. */
function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && existsSync(join(dir, 'README.md')) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'tern') return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no repository root above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

const ROOT = repositoryRoot();

function markdownUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(join(ROOT, path)).isDirectory()) return markdownUnder(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

const disk: Files = {
  exists: (path) => existsSync(join(ROOT, path)),
  read: (path) => (existsSync(join(ROOT, path)) ? readFileSync(join(ROOT, path), 'utf8') : null),
};

/** Documents given as text, over files that exist by name only. */
function memory(existing: string[] = []): Files {
  return { exists: (path) => existing.includes(path), read: () => null };
}

describe('the documents of this repository', () => {
  const paths = ['README.md', 'CONTRIBUTING.md', ...markdownUnder('docs')];
  const documents = new Map(paths.map((p) => [p, readFileSync(join(ROOT, p), 'utf8')]));
  const readme = documents.get('README.md')!;

  test('every relative link and anchor of README.md and docs/ resolves', () => {
    assert.ok(paths.length > 5, `documents found: ${paths.join(', ')}`);
    assert.deepEqual(brokenLinks(documents, disk), []);
  });

  test('the README is a front page: under 160 lines', () => {
    const lines = lineCount(readme);
    assert.ok(lines < 160, `README.md has ${lines} lines: move the detail to docs/`);
  });

  test("the README's first lines are the two commands a newcomer needs", () => {
    const firstBlock = /```[a-z]*\n([\s\S]*?)```/.exec(readme);
    assert.ok(firstBlock, 'README.md has no code block');
    const commands = firstBlock[1]!
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => l.replace(/\s+#.*$/, '').trim());
    assert.deepEqual(commands.slice(0, 2), ['npm ci && npm start', 'npm test']);
  });

  test('the README links every document of docs/', () => {
    const linked = new Set(links(readme).map((l) => l.target.split('#')[0]));
    const unlinked = paths.filter((p) => p.startsWith('docs/') && !linked.has(p));
    assert.deepEqual(unlinked, []);
  });

  test('the console screenshot is shown', () => {
    const images = [...documents.values()].flatMap((text) => links(text).map((l) => l.target));
    assert.ok(images.some((t) => t.endsWith('console-message.png')));
    assert.ok(existsSync(join(ROOT, 'docs/console-message.png')));
  });
});

describe('the link check', () => {
  test('a link to a file that exists, and to a heading of it, passes', () => {
    const docs = new Map([
      ['README.md', 'See [ops](docs/ops.md#backup-and-restore) and [the image](docs/shot.png).\n'],
      ['docs/ops.md', '# Operations\n\n## Backup and restore\n\nBack to [the top](../README.md).\n'],
    ]);
    assert.deepEqual(brokenLinks(docs, memory(['docs/shot.png'])), []);
  });

  test('a missing file is reported with its document and line', () => {
    const docs = new Map([['docs/a.md', '# A\n\nline two\n[gone](missing.md)\n']]);
    assert.deepEqual(brokenLinks(docs, memory()), ['docs/a.md:4: missing.md: no such file docs/missing.md']);
  });

  test('a missing anchor is reported, in another document and in its own', () => {
    const docs = new Map([
      ['README.md', '# Tern\n\n[x](docs/b.md#nowhere) [y](#tern) [z](#ternn)\n'],
      ['docs/b.md', '# B\n'],
    ]);
    assert.deepEqual(brokenLinks(docs, memory()), [
      'README.md:3: docs/b.md#nowhere: docs/b.md has no heading #nowhere',
      'README.md:3: #ternn: README.md has no heading #ternn',
    ]);
  });

  test('an anchor into a file that is not Markdown, an empty link, an absolute path and a way out are reported', () => {
    const docs = new Map([['docs/c.md', '[a](shot.png#top) [b]() [c](/README.md) [d](../../etc/passwd)\n']]);
    assert.deepEqual(brokenLinks(docs, memory(['docs/shot.png', 'README.md'])), [
      'docs/c.md:1: shot.png#top: an anchor into docs/shot.png, which is not a Markdown document',
      'docs/c.md:1: : an empty link',
      'docs/c.md:1: /README.md: an absolute path (write it relative to docs/c.md)',
      'docs/c.md:1: ../../etc/passwd: leads out of the repository',
    ]);
  });

  test('links in code blocks and code spans are not links; links out of the repository are not followed', () => {
    const text = [
      '```md',
      '[not a link](nowhere.md)',
      '```',
      '`[nor this](nowhere.md)` but [this is](https://example.com/x#y) and <http://localhost:8080/console/>',
      '~~~',
      '[nor](gone.md)',
      '~~~',
    ].join('\n');
    assert.deepEqual(links(text), [{ target: 'https://example.com/x#y', line: 4 }]);
    assert.deepEqual(brokenLinks(new Map([['a.md', text]]), memory()), []);
  });

  test('reference definitions are links too', () => {
    assert.deepEqual(links('[x][ref]\n\n[ref]: docs/gone.md "title"\n'), [{ target: 'docs/gone.md', line: 3 }]);
  });

  test('anchors are the headings as GitHub spells them', () => {
    assert.equal(slug('Test numbers — SMS'), 'test-numbers--sms');
    assert.equal(slug('One-time passwords (verify API)'), 'one-time-passwords-verify-api');
    assert.equal(slug("The message's trip"), 'the-messages-trip');
    assert.equal(slug('`SMSMODE_HTTP`'), 'smsmode_http');
    assert.equal(slug('Legacy HTTP 1.6'), 'legacy-http-16');
    assert.equal(slug('[Linked](x.md) *heading*'), 'linked-heading');
    assert.deepEqual([...anchors('# A\n## Setup\n### Setup\n```\n# not a heading\n```\n<a id="here"></a>\n')], ['a', 'setup', 'setup-1', 'here']);
  });

  test('line counts', () => {
    assert.equal(lineCount(''), 0);
    assert.equal(lineCount('one'), 1);
    assert.equal(lineCount('one\n'), 1);
    assert.equal(lineCount('one\ntwo\n'), 2);
    assert.equal(lineCount('one\n\n'), 2);
  });
});
