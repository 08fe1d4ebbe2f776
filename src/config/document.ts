// The settings' part of docs/configuration.md, written from the declarations (`npm run docs:settings`); a test
// fails when the document differs from what this writes.
import { fileKeyOf, type Rule, type Section, type Setting, type SettingTree, settingsOf } from './setting.ts';

export const BEGIN = '<!-- settings: written by `npm run docs:settings` from src/config/settings.ts and rules.ts; edit those -->';
export const END = '<!-- settings: end -->';

const cell = (markdown: string): string => markdown.replaceAll('|', '\\|').replaceAll('\n', ' ');

function documentedDefault(s: Setting<unknown>): string {
  if (s.documentedDefault !== undefined) return s.documentedDefault;
  if (typeof s.default === 'string' || typeof s.default === 'number' || typeof s.default === 'boolean') {
    return s.default === '' ? 'empty' : `\`${String(s.default)}\``;
  }
  throw new Error(`${s.env}: a default the documentation cannot show needs a documentedDefault`);
}

function meaning(s: Setting<unknown>): string {
  const notes = [
    ...(s.secret ? ['a secret: better kept in a file (see [Settings from files](#settings-from-files))'] : []),
    ...(s.formerly === undefined ? [] : [`\`${s.formerly}\` (\`${fileKeyOf(s.formerly)}\`), its former name, is still read`]),
  ];
  return notes.length === 0 ? s.doc : `${s.doc}; ${notes.join('; ')}`;
}

function row(s: Setting<unknown>): string {
  return `| \`${s.env}\` | \`${s.fileKey}\` | ${cell(documentedDefault(s))} | ${cell(s.kind.values)} | ${cell(meaning(s))} |`;
}

/** The tables of settings by section, then the rules between them, as Markdown. */
export function settingsDocument<V>(
  tree: SettingTree,
  sections: ReadonlyArray<{ id: Section; title: string; intro?: string }>,
  rules: ReadonlyArray<Rule<V>>,
): string {
  const all = settingsOf(tree);
  const unplaced = all.filter((s) => !sections.some((x) => x.id === s.section));
  if (unplaced.length > 0) throw new Error(`settings in no section: ${unplaced.map((s) => s.env).join(', ')}`);
  const parts = sections.flatMap((section) => {
    const rows = all.filter((s) => s.section === section.id);
    if (rows.length === 0) return [];
    return [
      `### ${section.title}`,
      ...(section.intro === undefined ? [] : [section.intro]),
      ['| variable | file key | default | values | meaning |', '|---|---|---|---|---|', ...rows.map(row)].join('\n'),
    ];
  });
  parts.push('### Settings that go together', rules.map((r) => `- ${r.says}.`).join('\n'));
  return parts.join('\n\n');
}

/** `document` with the text between its markers replaced by `generated`. */
export function withSettings(document: string, generated: string): string {
  const begin = document.indexOf(BEGIN);
  const end = document.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`the document has no ${BEGIN} … ${END} markers`);
  return `${document.slice(0, begin + BEGIN.length)}\n\n${generated}\n\n${document.slice(end)}`;
}
