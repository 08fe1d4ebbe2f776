import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { CampaignCsvError, csvRecipients } from '../../src/domain/campaign-csv.ts';
import { parseCsv } from '../../src/domain/csv.ts';
import { parseTemplate, renderTemplate, TemplateError } from '../../src/domain/templates.ts';

const SEED = 4646;
const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,10}$/);
/** Text and values with no `{`: what a placeholder could be read from is only what the template writes. */
const plain = fc.string({ maxLength: 12 }).map((s) => s.replace(/[{}\\|]/g, ''));

test('placeholders are filled by value, else default; the rest is kept as it is', () => {
  const t = parseTemplate('Hello {{firstName|there}}, your code is {{ code }}. {{firstName}}!');
  assert.deepEqual(t.variables, ['firstName', 'code']);
  assert.equal(renderTemplate(t, { firstName: 'Ada', code: '42' }), 'Hello Ada, your code is 42. Ada!');
  assert.throws(
    () => renderTemplate(t, { code: '42' }),
    (e: unknown) => e instanceof TemplateError && e.variable === 'firstName',
  );
  assert.equal(renderTemplate(parseTemplate('Hi {{n|there}}'), {}), 'Hi there');
  assert.equal(renderTemplate(parseTemplate('Hi {{n|}}!'), {}), 'Hi !', 'an empty default is a default');
});

test('a value for a variable the template does not use is refused, unless not strict', () => {
  const t = parseTemplate('Hi {{name}}');
  assert.throws(
    () => renderTemplate(t, { name: 'a', nmae: 'b' }),
    (e: unknown) => e instanceof TemplateError && e.variable === 'nmae',
  );
  assert.equal(renderTemplate(t, { name: 'a', city: 'b' }, false), 'Hi a');
});

test('bad placeholders and undeclared variables are refused when the template is made', () => {
  for (const bad of ['Hi {{name', 'Hi {{}}', 'Hi {{first name}}', 'Hi {{1st}}', 'Hi {{a{{b}}', 'Hi {{|x}}', `{{${'a'.repeat(65)}}}`]) {
    assert.throws(() => parseTemplate(bad), TemplateError, bad);
  }
  assert.throws(
    () => parseTemplate('Hi {{name}} {{city}}', ['name']),
    (e: unknown) => e instanceof TemplateError && e.variable === 'city',
  );
  assert.deepEqual(parseTemplate('Hi {{name}}', ['name', 'unused']).variables, ['name']);
});

test('\\{{ writes a literal {{, and a value is never read as a placeholder', () => {
  const t = parseTemplate('Use \\{{name}} for {{name}}');
  assert.deepEqual(t.variables, ['name']);
  assert.equal(renderTemplate(t, { name: '{{name}}' }), 'Use {{name}} for {{name}}');
});

test('rendering never leaves a {{ of a known variable (property)', () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof(plain, fc.record({ n: name, d: fc.option(plain, { nil: undefined }) })), { maxLength: 8 }),
      fc.dictionary(name, plain),
      (pieces, values) => {
        const text = pieces.map((p) => (typeof p === 'string' ? p : `{{${p.n}${p.d === undefined ? '' : `|${p.d}`}}}`)).join('');
        const t = parseTemplate(text);
        const known = Object.fromEntries(t.variables.map((v) => [v, values[v] ?? 'x']));
        const out = renderTemplate(t, known);
        for (const v of t.variables) assert.ok(!out.includes(`{{${v}`), `${text} → ${out}`);
        assert.ok(!out.includes('{{'));
      },
    ),
    { seed: SEED, numRuns: 500 },
  );
});

test('escaped text renders to itself (property)', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 30 }), (s) => {
      const literal = s.replace(/\\/g, '');
      const escaped = literal.replace(/\{\{/g, '\\{{');
      // A `{` right before an escaped `{{` would make `{\{{`: still literal, which is what is checked.
      const t = parseTemplate(escaped);
      assert.deepEqual(t.variables, []);
      assert.equal(renderTemplate(t, {}), literal);
    }),
    { seed: SEED, numRuns: 500 },
  );
});

test('a missing value is refused naming the variable (property)', () => {
  fc.assert(
    fc.property(fc.uniqueArray(name, { minLength: 1, maxLength: 5 }), fc.nat(), (names, k) => {
      const t = parseTemplate(names.map((n) => `{{${n}}}`).join(' '));
      const missing = names[k % names.length]!;
      const values = Object.fromEntries(names.filter((n) => n !== missing).map((n) => [n, 'v']));
      assert.throws(
        () => renderTemplate(t, values),
        (e: unknown) => e instanceof TemplateError && e.variable === missing,
      );
    }),
    { seed: SEED, numRuns: 200 },
  );
});

test('a campaign file: number and reference columns by name, every other column a value by its header', () => {
  const rows = csvRecipients(parseCsv('Phone;firstName;ref;__proto__;city\n33600000001;Ada;r1;x;\n33600000002;;;;Lyon\n'));
  assert.deepEqual(rows[0], {
    to: '33600000001',
    refClient: 'r1',
    values: Object.fromEntries([
      ['firstName', 'Ada'],
      ['__proto__', 'x'],
    ]),
    label: 'row 1 (line 2)',
  });
  assert.equal(Object.hasOwn(rows[0]!.values, '__proto__'), true, 'a column named __proto__ is an own value');
  assert.deepEqual(rows[1], { to: '33600000002', values: { city: 'Lyon' }, label: 'row 2 (line 3)' });
  assert.throws(() => csvRecipients(parseCsv('name,city\nAda,Paris\n')), CampaignCsvError);
  assert.throws(() => csvRecipients(parseCsv('number,city,city\n1,a,b\n')), /named twice/);
  assert.throws(() => csvRecipients(parseCsv('number\n')), /no rows/);
});
